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

const PREFIX = /^uaid:(aid|did):/;

export function parseUaid(uaid: string): UaidParts {
  const prefix = PREFIX.exec(uaid);
  if (!prefix) return { target: null, id: uaid, params: {} };
  const [id = '', ...pairs] = uaid.slice(prefix[0].length).split(';');
  // A null-prototype record: a hostile `__proto__=x` parameter must stay a plain key.
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const key = pair.slice(0, eq);
    if (!(key in params)) params[key] = decodeValue(pair.slice(eq + 1));
  }
  const parts: UaidParts = { target: prefix[1] as 'aid' | 'did', id, params };
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
