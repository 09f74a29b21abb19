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

/** Bytes kept of a v2 HMAC; see {@link responseHashV2}. */
export const HASH_V2_BYTES = 16;

/**
 * v2 response commitment: `hs256:` + base64url(first 16 bytes of HMAC-SHA256(runKey, "hcs-25/response/v2\n" + signal
 * id + "\n" + subject + "\n" + raw response)).
 * - Keyed by the run key, so before the reveal nobody can test guesses ("35") against it, and across runs equal
 *   replies give unrelated hashes; the subject and signal id in the input make equal replies of two agents (or of two
 *   evals) in one run differ too. After the reveal, whoever holds the raw response can check it.
 * - 16 bytes: a forger without the key must hit 128 bits; even the publisher, who holds the key, needs ~2^64 work to
 *   find two replies with one hash. That is the same strength as the question hash, and saves 21 characters per eval,
 *   which is most of what the 1024-byte packed messages are made of.
 */
export function responseHashV2(runKey: Buffer, signal: string, subject: string, response: string): string {
  const mac = createHmac('sha256', runKey)
    .update(`hcs-25/response/v2\n${signal}\n${subject}\n`, 'utf8')
    .update(response, 'utf8');
  return `hs256:${mac.digest().subarray(0, HASH_V2_BYTES).toString('base64url')}`;
}
