import { createHash, createHmac, randomBytes } from 'node:crypto';

export const RUN_KEY_BYTES = 32;

export function newRunKey(): Buffer {
  return randomBytes(RUN_KEY_BYTES);
}

export function encodeRunKey(key: Buffer): string {
  return key.toString('base64url');
}

export function decodeRunKey(text: string): Buffer {
  const key = Buffer.from(text, 'base64url');
  if (key.length !== RUN_KEY_BYTES) throw new RangeError(`a run key is ${RUN_KEY_BYTES} bytes; got ${key.length}`);
  return key;
}

/**
 * `hs256:` + base64url(first 16 bytes of HMAC-SHA256(runKey, questionId)).
 * Keyed, because a plain hash of `math:add:37+58` is brute-forced from ~10k candidates; the key is revealed
 * after the run so anyone can audit which question each signal asked.
 */
export function questionHash(runKey: Buffer, questionId: string): string {
  return `hs256:${createHmac('sha256', runKey).update(questionId, 'utf8').digest().subarray(0, 16).toString('base64url')}`;
}

/** `sha256:` + base64url(SHA-256(raw response)): commits to the response without publishing it. */
export function responseHash(response: string): string {
  return `sha256:${createHash('sha256').update(response, 'utf8').digest('base64url')}`;
}
