/**
 * Reveal v2 (`op: "reveal"`, `v: 2`): everything needed to re-derive each question of a run from public data.
 * With `seed`, `generator` and (for SimpleScience) the bank, `questionFor(kind, subject, seed, bank)` rebuilds the
 * question a signal asked, its options and expected answer; `key` checks its `questionHash` (and keyed response
 * hashes); `grader` re-grades its `answer`. A private bank is named by digest only: whoever holds it can verify.
 */
import { z } from 'zod';
import { DIGEST_PATTERN } from '../core/digest.js';
import { finishMessage, type BuiltMessage } from './build.js';
import { PROTOCOL_ID } from './schemas.js';

export const REVEAL_MESSAGE_VERSION = 2;

export const revealBankSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/).describe('builtin (the bank bundled with hcs25) or private'),
    digest: z.string().regex(DIGEST_PATTERN).describe('sha256: + base64url of the bank\'s validated questions as canonical JSON'),
  })
  .loose();

export const revealMessageV2Schema = z
  .object({
    p: z.literal(PROTOCOL_ID),
    op: z.literal('reveal'),
    v: z.literal(REVEAL_MESSAGE_VERSION),
    run: z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a ULID').describe('ULID of the run'),
    key: z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'must be a base64url 32-byte key').describe('the run key (HMAC key of its hashes)'),
    seed: z.string().min(1).max(128).describe('the run seed questions are derived from'),
    generator: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]*@\d+$/)
      .describe('version of the question derivation (RNG, SimpleMath generator, SimpleScience pick and shuffle)'),
    grader: z.string().regex(/^[a-z][a-z-]*@\d+$/).describe('grader the run used'),
    bank: revealBankSchema.optional().describe('the SimpleScience bank; absent when the run asked no science question'),
  })
  .loose()
  .describe('Publishes what re-derives every question of a run (op "reveal", v2)');

export type RevealMessageV2 = z.infer<typeof revealMessageV2Schema>;
export type RevealInput = Omit<RevealMessageV2, 'p' | 'op' | 'v'>;

export function buildRevealMessageV2(input: RevealInput): BuiltMessage<RevealMessageV2> {
  const message = revealMessageV2Schema.parse({ p: PROTOCOL_ID, op: 'reveal', v: REVEAL_MESSAGE_VERSION, ...input });
  return finishMessage(message, 'reveal message');
}
