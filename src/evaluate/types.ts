import type { Agent, Protocol } from '../core/agent.js';

export type EvalKind = 'math' | 'science' | 'availability';
export const EVAL_KINDS: readonly EvalKind[] = ['math', 'science', 'availability'];

export type Letter = 'A' | 'B' | 'C' | 'D';

export interface MathQuestion {
  kind: 'math';
  /** Stable id: `math:add:37+58`, `math:sub:80-12`, `math:mul:7*8`. Never published in plain. */
  id: string;
  op: 'add' | 'sub' | 'mul';
  a: number;
  b: number;
  expected: number;
  prompt: string;
}

export interface ScienceQuestion {
  kind: 'science';
  /** Stable id `sci:<category>:<slug>`. Never published in plain. */
  id: string;
  category: string;
  stem: string;
  /** Options in the order asked in this run (shuffled per run). */
  options: [string, string, string, string];
  answer: Letter;
  prompt: string;
}

export type Question = MathQuestion | ScienceQuestion;

export type GradeOutcome = 'correct' | 'wrong' | 'unparseable' | 'empty';

export interface GradeResult {
  outcome: GradeOutcome;
  /** The extracted answer token (number or letter), or null. */
  answer: string | null;
  /** True only when the normalised response is exactly the bare answer. */
  compliant: boolean;
  reason?: string;
}

export type GraderId = 'first-token@1' | 'last-answer@1';

/** Outcome of one eval, including failures before grading. */
export type EvalOutcome = GradeOutcome | 'timeout' | 'error' | 'upstream-error' | 'skipped';

export interface EvalResult {
  kind: 'math' | 'science';
  agent: Agent;
  questionId: string;
  outcome: EvalOutcome;
  score: 0 | 100;
  answer: string | null;
  compliant: boolean;
  latencyMs: number;
  /** Raw response text; kept in the local journal only, never on-chain. */
  response: string | null;
  reason?: string;
  transport: Protocol;
  grader: GraderId;
  /** ISO time the answer (or failure) came back. */
  fetchedAt: string;
}

export interface ProbeEvalResult {
  kind: 'availability';
  agent: Agent;
  reachable: boolean;
  latencyMs: number;
  httpStatus?: number;
  reason?: string;
  transport: Protocol;
  fetchedAt: string;
}

export type AnyEvalResult = EvalResult | ProbeEvalResult;
