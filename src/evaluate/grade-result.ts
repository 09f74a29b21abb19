import type { GradeOutcome, GradeResult, GraderId } from './types.js';

export const DEFAULT_GRADER: GraderId = 'first-token@1';
export const GRADER_IDS: readonly GraderId[] = ['first-token@1', 'last-answer@1'];

/** On-chain `answer` is at most 16 characters (DESIGN §3.1); a longer token is cut with an ellipsis. */
const MAX_ANSWER = 16;

export function gradeResult(
  outcome: GradeOutcome,
  answer: string | null,
  compliant: boolean,
  reason?: string,
): GradeResult {
  const shown = answer !== null && answer.length > MAX_ANSWER ? `${answer.slice(0, MAX_ANSWER - 1)}…` : answer;
  return reason === undefined ? { outcome, answer: shown, compliant } : { outcome, answer: shown, compliant, reason };
}

export const EMPTY_RESULT: GradeResult = Object.freeze(gradeResult('empty', null, false, 'empty'));
