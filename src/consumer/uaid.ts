/**
 * The routing parameters of an HCS-14 UAID (`uaid:aid:<id>;uid=0;registry=hol;proto=a2a;nativeId=…`).
 * HCS-25 applicability reads `registry` and `proto` from here. Subjects come from public topics, so this never
 * throws: anything that is not a UAID simply has no parameters.
 */
export interface UaidParts {
  /** `aid` or `did`, or null when the string is not a UAID. */
  target: 'aid' | 'did' | null;
  /** The identifier between `uaid:{target}:` and the first `;`. */
  id: string;
  /** Parameters in the order they appear; a repeated key keeps its first value. */
  params: Record<string, string>;
  registry?: string;
  proto?: string;
  nativeId?: string;
}

/** Both prefixes (`uaid:aid:`, `uaid:did:`) are this long. */
const PREFIX_LENGTH = 9;

export function parseUaid(uaid: string): UaidParts {
  // Scanned with indexOf rather than a regex and split: scoring parses every subject of a registry.
  const target = uaid.startsWith('uaid:aid:') ? 'aid' : uaid.startsWith('uaid:did:') ? 'did' : null;
  if (target === null) return { target: null, id: uaid, params: {} };
  // A null-prototype record: a hostile `__proto__=x` parameter must stay a plain key.
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  let end = uaid.indexOf(';', PREFIX_LENGTH);
  const id = uaid.slice(PREFIX_LENGTH, end === -1 ? uaid.length : end);
  while (end !== -1) {
    const from = end + 1;
    end = uaid.indexOf(';', from);
    const to = end === -1 ? uaid.length : end;
    const eq = uaid.indexOf('=', from);
    if (eq <= from || eq >= to) continue;
    const key = uaid.slice(from, eq);
    if (!(key in params)) params[key] = decodeValue(uaid.slice(eq + 1, to));
  }
  const parts: UaidParts = { target, id, params };
  if (params.registry) parts.registry = params.registry;
  if (params.proto) parts.proto = params.proto;
  if (params.nativeId) parts.nativeId = params.nativeId;
  return parts;
}

/** HCS-14 values are plain; tolerate percent-encoding from emitters that escape `;` or `=` in a value. */
function decodeValue(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
