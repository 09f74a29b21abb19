import { UsageError } from '../core/errors.js';
import type { GradeResult, GraderId, Question } from './types.js';
import { DEFAULT_GRADER, GRADER_IDS } from './grade-result.js';
import { gradeMath } from './grade-math.js';
import { gradeChoice } from './grade-choice.js';

export { DEFAULT_GRADER, GRADER_IDS };

export function isGraderId(value: string): value is GraderId {
  return (GRADER_IDS as readonly string[]).includes(value);
}

/** For flags and config: a known grader id, or a UsageError listing the known ones. */
export function parseGraderId(value: string): GraderId {
  if (isGraderId(value)) return value;
  throw new UsageError(`unknown grader "${value}"`, { hint: `use one of: ${GRADER_IDS.join(', ')}` });
}

/** Grades a response to any question with the chosen grader (default `first-token@1`). */
export function gradeQuestion(q: Question, response: string, grader: GraderId = DEFAULT_GRADER): GradeResult {
  return q.kind === 'math'
    ? gradeMath(response, q.expected, { grader, operands: [q.a, q.b] })
    : gradeChoice(response, q, { grader });
}
