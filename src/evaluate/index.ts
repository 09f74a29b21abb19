// The evals' public API (the runner is exported separately by its own module).
export type * from './types.js';
export { EVAL_KINDS } from './types.js';
export { createRng, randomSeed, type Rng } from './rng.js';
export {
  generateMathQuestion,
  buildMathQuestion,
  mathQuestionId,
  MATH_INSTRUCTIONS,
  MATH_OPS,
  type MathOp,
} from './math.js';
export {
  loadScienceBank,
  parseScienceBank,
  pickScienceQuestion,
  scienceQuestionFromEntry,
  sciencePrompt,
  scienceQuestionSchema,
  scienceBankSchema,
  ScienceBankError,
  SCIENCE_CATEGORIES,
  SCIENCE_INSTRUCTION,
  DEFAULT_SCIENCE_BANK_FILE,
  type ScienceBankEntry,
  type ScienceBank,
} from './science.js';
export { normaliseResponse } from './normalise.js';
export { gradeMath, canonicalNumber, type GradeMathOptions } from './grade-math.js';
export {
  gradeChoice,
  prepareChoiceQuestion,
  LETTERS,
  type ChoiceGrader,
  type ChoiceQuestion,
  type GradeChoiceOptions,
} from './grade-choice.js';
export { gradeQuestion, isGraderId, parseGraderId, DEFAULT_GRADER, GRADER_IDS } from './graders.js';
export { questionById } from './questions.js';
export { DEFAULT_EVALS, parseEvalList } from './eval-list.js';
