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
  // A null-prototype record: a hostile `__proto__=x` parameter must stay a plain key.
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  const found = scanUaid(uaid, (from, eq, to) => {
    const key = uaid.slice(from, eq);
    if (!(key in params)) params[key] = decodeValue(uaid.slice(eq + 1, to));
  });
  if (found.target === null) return { target: null, id: uaid, params: {} };
  const parts: UaidParts = { target: found.target, id: found.id, params };
  if (params.registry) parts.registry = params.registry;
  if (params.proto) parts.proto = params.proto;
  if (params.nativeId) parts.nativeId = params.nativeId;
  return parts;
}

/** A UAID's parts without `params`. */
export type UaidRouting = Omit<UaidParts, 'params'>;

/**
 * `parseUaid` without the `params` record, reading only `registry`, `proto` and `nativeId` (first value of each, as
 * there): scoring reads these of every subject of a registry, and builds no record of the rest.
 */
export function uaidRouting(uaid: string): UaidRouting {
  let registry: string | undefined;
  let proto: string | undefined;
  let nativeId: string | undefined;
  const found = scanUaid(uaid, (from, eq, to) => {
    const length = eq - from;
    if (length === 8 && registry === undefined && uaid.startsWith('registry', from)) registry = decodeValue(uaid.slice(eq + 1, to));
    else if (length === 5 && proto === undefined && uaid.startsWith('proto', from)) proto = decodeValue(uaid.slice(eq + 1, to));
    else if (length === 8 && nativeId === undefined && uaid.startsWith('nativeId', from)) nativeId = decodeValue(uaid.slice(eq + 1, to));
  });
  if (found.target === null) return { target: null, id: uaid };
  const parts: UaidRouting = { target: found.target, id: found.id };
  if (registry) parts.registry = registry;
  if (proto) parts.proto = proto;
  if (nativeId) parts.nativeId = nativeId;
  return parts;
}

/**
 * The target and id of a UAID, handing each `key=value` parameter to `param` as positions (key from `from` to `eq`,
 * value from `eq + 1` to `to`). Scanned with indexOf rather than a regex and split: scoring reads every subject.
 */
function scanUaid(uaid: string, param: (from: number, eq: number, to: number) => void): { target: UaidParts['target']; id: string } {
  const target = uaid.startsWith('uaid:aid:') ? 'aid' : uaid.startsWith('uaid:did:') ? 'did' : null;
  if (target === null) return { target, id: uaid };
  let end = uaid.indexOf(';', PREFIX_LENGTH);
  const id = uaid.slice(PREFIX_LENGTH, end === -1 ? uaid.length : end);
  while (end !== -1) {
    const from = end + 1;
    end = uaid.indexOf(';', from);
    const to = end === -1 ? uaid.length : end;
    const eq = uaid.indexOf('=', from);
    if (eq <= from || eq >= to) continue;
    param(from, eq, to);
  }
  return { target, id };
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
