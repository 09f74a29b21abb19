import type { MathQuestion } from './types.js';
import type { Rng } from './rng.js';

export type MathOp = MathQuestion['op'];
export const MATH_OPS: readonly MathOp[] = ['add', 'sub', 'mul'];

/** Operand ranges from the founding document (simple-evals.md, "Question generation"). */
const RANGES: Record<MathOp, { a: [number, number]; b: [number, number] }> = {
  add: { a: [10, 100], b: [10, 100] },
  sub: { a: [10, 100], b: [1, 50] },
  mul: { a: [2, 12], b: [2, 12] },
};

/** The symbol in the stable question id. */
const ID_SYMBOL: Record<MathOp, string> = { add: '+', sub: '-', mul: '*' };
/** The symbol the agent reads; `×` is what a person would write, and never looks like markdown emphasis. */
const PROMPT_SYMBOL: Record<MathOp, string> = { add: '+', sub: '-', mul: '×' };

/**
 * Equivalent instruction wordings, rotated per question (the seed's "instruction compliance" guidance):
 * an agent tuned to one exact string should not get a free pass. The first is the seed's own wording and
 * is the one a question rebuilt from its id uses.
 */
export const MATH_INSTRUCTIONS: readonly [string, ...string[]] = [
  'Answer with just the number.',
  'Reply with only the number.',
  'Respond with just the number and nothing else.',
  'Give only the number as your answer.',
];

function evaluate(op: MathOp, a: number, b: number): number {
  if (op === 'add') return a + b;
  if (op === 'sub') return a - b;
  return a * b;
}

export function mathQuestionId(op: MathOp, a: number, b: number): string {
  return `math:${op}:${a}${ID_SYMBOL[op]}${b}`;
}

/** Builds the question for given operands; `instruction` defaults to the seed's wording. */
export function buildMathQuestion(
  op: MathOp,
  a: number,
  b: number,
  instruction: string = MATH_INSTRUCTIONS[0],
): MathQuestion {
  return {
    kind: 'math',
    id: mathQuestionId(op, a, b),
    op,
    a,
    b,
    expected: evaluate(op, a, b),
    prompt: `${instruction}\n\nWhat is ${a} ${PROMPT_SYMBOL[op]} ${b}?`,
  };
}

/** One question: the operation uniformly, then the operands, then the instruction wording, in that order. */
export function generateMathQuestion(rng: Rng): MathQuestion {
  const op = rng.pick(MATH_OPS);
  const range = RANGES[op];
  const a = rng.int(range.a[0], range.a[1]);
  const b = rng.int(range.b[0], range.b[1]);
  return buildMathQuestion(op, a, b, rng.pick(MATH_INSTRUCTIONS));
}

const ID_RE = /^math:(add|sub|mul):(\d{1,6})([+\-*])(\d{1,6})$/;

/** Rebuilds a question from its stable id (`math:add:37+58`), or undefined when the id is not one. */
export function mathQuestionFromId(id: string): MathQuestion | undefined {
  const m = ID_RE.exec(id);
  if (!m) return undefined;
  const op = m[1] as MathOp;
  if (m[3] !== ID_SYMBOL[op]) return undefined;
  return buildMathQuestion(op, Number(m[2]), Number(m[4]));
}
