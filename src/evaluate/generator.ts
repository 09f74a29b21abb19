/**
 * What fixes a run's questions, for reveals and verification. `questionFor(kind, subject, seed, bank)` derives every
 * question from public data once a run is revealed; these name the parts a later release could change.
 */
import { contentDigest } from '../core/digest.js';
import type { ScienceBankEntry } from './science.js';

/**
 * Version of the question derivation: the RNG (sfc32 seeded by SHA-256 of `seed\0subject\0kind`), the SimpleMath
 * generator (operation, operands, instruction wording, in that order) and the SimpleScience pick + option shuffle.
 * Bump it whenever any of them would derive a different question from the same inputs.
 */
export const QUESTION_GENERATOR = 'hcs25-questions@1';

/** Bank id published for the bank bundled with hcs25 (`data/science-bank.json`); `private` for any other. */
export const BUILTIN_SCIENCE_BANK_ID = 'builtin';
export const PRIVATE_SCIENCE_BANK_ID = 'private';

/**
 * Digest of a SimpleScience bank's canonical bytes (its validated questions as canonical JSON): a reformatted copy
 * of the same bank has the same digest, so whoever holds a private bank can show it is the one a run used.
 */
export function scienceBankDigest(bank: readonly ScienceBankEntry[]): string {
  return contentDigest({ version: 1, questions: bank });
}
