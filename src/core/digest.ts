import { createHash } from 'node:crypto';

export const DIGEST_PATTERN = /^sha256:[A-Za-z0-9_-]{43}$/;

/**
 * JSON with object keys sorted (code-unit order) at every level and no whitespace: the same value gives the same
 * bytes whatever order or formatting a file was written in, so a digest names content, not a file.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) out[key] = sortKeys(v);
  }
  return out;
}

/** `sha256:` + base64url(SHA-256(canonical JSON of value)). */
export function contentDigest(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value), 'utf8').digest('base64url')}`;
}
