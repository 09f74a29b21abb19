import type { MathQuestion, ScienceQuestion } from './types.js';
import { mathQuestionFromId } from './math.js';
import { loadScienceBank, scienceQuestionFromEntry, type ScienceBankEntry } from './science.js';

/**
 * Rebuilds a question from its stable id, for re-grading from the journal and for `hcs25 grade`:
 * `math:add:37+58` is computed (with the seed's instruction wording); `sci:…` is looked up in `bank`
 * (default: the bundled bank) and returned with its options in canonical order.
 */
export function questionById(id: string, bank?: ScienceBankEntry[]): MathQuestion | ScienceQuestion | undefined {
  if (id.startsWith('math:')) return mathQuestionFromId(id);
  if (!id.startsWith('sci:')) return undefined;
  const entry = (bank ?? loadScienceBank()).find((q) => q.id === id);
  return entry ? scienceQuestionFromEntry(entry) : undefined;
}
