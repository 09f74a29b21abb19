/** The evals a run or `hcs25 eval` asks, as given on the command line (`--evals availability,math,science`). */
import { UsageError } from '../core/errors.js';
import type { EvalKind } from './types.js';

/** Every eval, in the order results are listed. */
export const DEFAULT_EVALS: readonly EvalKind[] = ['availability', 'math', 'science'];

/** `availability,math` → the eval kinds, or a UsageError naming what is unknown. */
export function parseEvalList(value: string, flag = '--evals'): EvalKind[] {
  const kinds = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = kinds.filter((k) => !(DEFAULT_EVALS as readonly string[]).includes(k));
  if (kinds.length === 0 || bad.length > 0) {
    throw new UsageError(
      `${flag} takes a comma-separated list of ${DEFAULT_EVALS.join(', ')}${bad.length ? `; unknown: ${bad.join(', ')}` : ''}`,
    );
  }
  return [...new Set(kinds)] as EvalKind[];
}
