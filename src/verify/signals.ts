/**
 * Verification of published eval signals against their run's reveal, from public data only (plus, optionally, a
 * private science bank and raw responses). Pure: no I/O except reading the bundled science bank when a reveal names it.
 *
 * For each SimpleMath/SimpleScience signal of a revealed run: re-derive the question with `questionFor` from the
 * reveal's seed, the signal's subject and kind, and the bank; check `questionHash` = HMAC(key, question id); re-grade
 * the published `answer` token with the run's grader against the expected answer and check `outcome` and `score`;
 * where a raw response is supplied, check `responseHash` and that grading it gives the published answer.
 */
import { questionFor } from '../evaluate/runner.js';
import { BUILTIN_SCIENCE_BANK_ID, QUESTION_GENERATOR, scienceBankDigest } from '../evaluate/generator.js';
import { gradeQuestion, isGraderId } from '../evaluate/graders.js';
import { loadScienceBank, type ScienceBankEntry } from '../evaluate/science.js';
import type { EvalOutcome, GraderId, Question } from '../evaluate/types.js';
import { statusForOutcome } from '../format/status.js';
import { EVAL_OUTCOMES } from '../format/protocol.js';
import { SIGNAL_IDS_V2, canonicalSignalId } from '../format/schema-v2.js';
import { decodeRunKey, questionHash, responseHash } from '../format/hashing.js';
import { checkPublishedScores, type ScoreRecordLike, type ScoreCheck } from './score.js';

/** The eval a signal id reports (v1 or v2 id), or undefined for signals that ask no question. */
export function evalKindOf(signalId: string): 'math' | 'science' | undefined {
  const id = canonicalSignalId(signalId);
  return id === SIGNAL_IDS_V2.math ? 'math' : id === SIGNAL_IDS_V2.science ? 'science' : undefined;
}

/** The fields verification reads, present in v1, v2 and packed signals alike (v2 leaves absent what v1 sets null). */
export interface VerifiableSignal {
  subject: string;
  signal: string;
  run: string;
  status?: string;
  data?: {
    outcome?: string;
    score?: number;
    questionHash?: string | null;
    answer?: string | null;
    responseHash?: string | null;
    grader?: string;
  };
  /** Where it was read, for reports: the topic sequence number and, in a pack, the signal's index. */
  sequenceNumber?: number;
  index?: number;
  /** The account that paid for it (mirror node): a reveal counts only for signals of the same payer. */
  payer?: string;
}

/** A reveal, v1 (run and key only) or v2 (format/schema-v2.ts). */
export interface VerifiableReveal {
  run: string;
  key: string;
  seed?: string;
  generator?: string;
  grader?: string;
  bank?: { id: string; digest: string };
  sequenceNumber?: number;
  /** The account that paid for it; with one, it applies only to that payer's signals (anyone can submit a reveal). */
  payer?: string;
}

export interface VerifyInput {
  signals: Iterable<VerifiableSignal>;
  /** Reveals in consensus order; the first one of a run (and payer, where given) counts. */
  reveals: Iterable<VerifiableReveal>;
  /** A science bank (e.g. the private bank a run used); the bundled bank is used when a reveal names `builtin`. */
  scienceBank?: readonly ScienceBankEntry[];
  /** Raw responses where known (the run journal, or the agent operator): the response a signal's hash commits to. */
  responseOf?: (signal: VerifiableSignal) => string | null | undefined;
  /**
   * The v2 response hash (`hs256:`, keyed by the run key); v1 hashes (`sha256:`) are checked without it. Without it,
   * v2 response hashes are not checked.
   */
  keyedResponseHash?: (key: Buffer, signal: VerifiableSignal, response: string) => string;
  /** Score records to recompute from their explanations. */
  scores?: Iterable<ScoreRecordLike>;
}

export type Verdict = 'verified' | 'mismatch' | 'unverifiable';
export type MismatchField = 'questionHash' | 'answer' | 'outcome' | 'status' | 'score' | 'responseHash' | 'grader';
export type UnverifiableReason =
  | 'no-reveal'
  | 'reveal-without-seed'
  | 'unknown-generator'
  | 'bad-key'
  | 'no-bank-in-reveal'
  | 'bank-not-supplied'
  | 'unknown-grader';

export interface SignalVerification {
  run: string;
  subject: string;
  signal: string;
  kind: 'math' | 'science';
  sequenceNumber?: number;
  index?: number;
  verdict: Verdict;
  /** The first published field that disagrees (mismatch). */
  field?: MismatchField;
  /** Why nothing could be checked (unverifiable). */
  reason?: UnverifiableReason;
  /** One line for people: what was expected and what was published. Never a question, an option or a response. */
  detail: string;
  /** A raw response was supplied and its hash checked. */
  responseChecked: boolean;
}

export interface VerifyReport {
  counts: { verified: number; mismatch: number; unverifiable: number; ignored: number };
  /** Per run: whether it is revealed and how its signals fared. */
  runs: Array<{ run: string; revealed: boolean; verified: number; mismatch: number; unverifiable: number }>;
  signals: SignalVerification[];
  scores: Array<ScoreCheck & { subject?: string }>;
}

interface Blocked {
  reason: UnverifiableReason;
  detail: string;
}

/** A revealed run: what re-derives its questions, or why its signals cannot be checked. */
type RunContext =
  | { blocked: Blocked }
  | {
      blocked?: undefined;
      key: Buffer;
      seed: string;
      grader: GraderId;
      bank?: readonly ScienceBankEntry[];
      scienceBlocked?: Blocked;
    };
type OpenRun = Extract<RunContext, { key: Buffer }>;

export function verifySignals(input: VerifyInput): VerifyReport {
  const contexts = new Map<string, RunContext>();
  const banks = new BankChooser(input.scienceBank);
  for (const reveal of input.reveals) {
    const key = revealKey(reveal.run, reveal.payer);
    if (!contexts.has(key)) contexts.set(key, runContext(reveal, banks));
  }
  const contextOf = (s: VerifiableSignal) =>
    contexts.get(revealKey(s.run, s.payer)) ?? contexts.get(revealKey(s.run, undefined));

  const signals: SignalVerification[] = [];
  const runs = new Map<string, VerifyReport['runs'][number]>();
  let ignored = 0;
  for (const s of input.signals) {
    const kind = evalKindOf(s.signal);
    if (!kind) {
      ignored++;
      continue;
    }
    const context = contextOf(s);
    const v = verifyOne(s, kind, context, input);
    signals.push(v);
    let run = runs.get(s.run);
    if (!run) {
      run = { run: s.run, revealed: context !== undefined, verified: 0, mismatch: 0, unverifiable: 0 };
      runs.set(s.run, run);
    }
    run[v.verdict]++;
  }
  const scores = checkPublishedScores(input.scores ?? []).results;
  const count = (verdict: Verdict) => signals.filter((s) => s.verdict === verdict).length;
  return {
    counts: { verified: count('verified'), mismatch: count('mismatch'), unverifiable: count('unverifiable'), ignored },
    runs: [...runs.values()].sort((a, b) => (a.run < b.run ? -1 : a.run > b.run ? 1 : 0)),
    signals,
    scores,
  };
}

function revealKey(run: string, payer: string | undefined): string {
  return `${run}\u0000${payer ?? ''}`;
}

function runContext(reveal: VerifiableReveal, banks: BankChooser): RunContext {
  let key: Buffer;
  try {
    key = decodeRunKey(reveal.key);
  } catch {
    return { blocked: { reason: 'bad-key', detail: 'the reveal key is not a 32-byte base64url key' } };
  }
  if (reveal.seed === undefined || reveal.grader === undefined || reveal.generator === undefined) {
    return {
      blocked: {
        reason: 'reveal-without-seed',
        detail: 'a v1 reveal publishes only the key: questions cannot be re-derived',
      },
    };
  }
  if (reveal.generator !== QUESTION_GENERATOR) {
    return {
      blocked: {
        reason: 'unknown-generator',
        detail: `questions were derived by ${reveal.generator}; this hcs25 derives ${QUESTION_GENERATOR}`,
      },
    };
  }
  if (!isGraderId(reveal.grader))
    return { blocked: { reason: 'unknown-grader', detail: `grader ${reveal.grader} is not known to this hcs25` } };
  const base = { key, seed: reveal.seed, grader: reveal.grader };
  if (!reveal.bank)
    return { ...base, scienceBlocked: { reason: 'no-bank-in-reveal', detail: 'the reveal names no science bank' } };
  const bank = banks.choose(reveal.bank);
  if (!bank) {
    const detail =
      reveal.bank.id === BUILTIN_SCIENCE_BANK_ID
        ? `the bundled bank of this hcs25 is not the one the run used (${reveal.bank.digest}); pass that bank with --science-bank`
        : `the run used a private bank (${reveal.bank.digest}); whoever holds it can verify with --science-bank`;
    return { ...base, scienceBlocked: { reason: 'bank-not-supplied', detail } };
  }
  return { ...base, bank };
}

/** Finds the bank whose digest a reveal names: the one supplied, else the bundled one. Digests are computed once. */
class BankChooser {
  private readonly byDigest = new Map<string, readonly ScienceBankEntry[]>();
  private builtinLoaded = false;

  constructor(supplied: readonly ScienceBankEntry[] | undefined) {
    if (supplied) this.byDigest.set(scienceBankDigest(supplied), supplied);
  }

  choose(named: { id: string; digest: string }): readonly ScienceBankEntry[] | undefined {
    if (!this.byDigest.has(named.digest) && named.id === BUILTIN_SCIENCE_BANK_ID && !this.builtinLoaded) {
      this.builtinLoaded = true;
      const builtin = loadScienceBank();
      this.byDigest.set(scienceBankDigest(builtin), builtin);
    }
    return this.byDigest.get(named.digest);
  }
}

function verifyOne(
  s: VerifiableSignal,
  kind: 'math' | 'science',
  run: RunContext | undefined,
  input: VerifyInput,
): SignalVerification {
  const base = {
    run: s.run,
    subject: s.subject,
    signal: s.signal,
    kind,
    ...(s.sequenceNumber !== undefined ? { sequenceNumber: s.sequenceNumber } : {}),
    ...(s.index !== undefined ? { index: s.index } : {}),
    responseChecked: false,
  };
  const unverifiable = (reason: UnverifiableReason, detail: string): SignalVerification => ({
    ...base,
    verdict: 'unverifiable',
    reason,
    detail,
  });
  if (!run) return unverifiable('no-reveal', 'the run has not been revealed');
  if (run.blocked) return unverifiable(run.blocked.reason, run.blocked.detail);
  if (kind === 'science' && run.scienceBlocked)
    return unverifiable(run.scienceBlocked.reason, run.scienceBlocked.detail);

  const question = questionFor(kind, s.subject, run.seed, run.bank ?? []);
  const found = check(s, question, run, input);
  return found.mismatch
    ? {
        ...base,
        verdict: 'mismatch',
        field: found.mismatch.field,
        detail: found.mismatch.detail,
        responseChecked: found.responseChecked,
      }
    : {
        ...base,
        verdict: 'verified',
        detail: 'question, answer, outcome and score agree with the reveal',
        responseChecked: found.responseChecked,
      };
}

const GRADED = new Set(['correct', 'wrong']);

function isOutcome(value: string): value is EvalOutcome {
  return (EVAL_OUTCOMES as readonly string[]).includes(value);
}

function check(
  s: VerifiableSignal,
  question: Question,
  run: OpenRun,
  input: VerifyInput,
): { mismatch?: { field: MismatchField; detail: string }; responseChecked: boolean } {
  const data = s.data ?? {};
  const outcome = data.outcome ?? '';
  const answer = data.answer ?? null;
  const published = data.questionHash ?? null;
  const asked = outcome !== 'skipped';
  let responseChecked = false;
  const fail = (field: MismatchField, detail: string) => ({ mismatch: { field, detail }, responseChecked });

  if (data.grader !== undefined && data.grader !== run.grader)
    return fail('grader', `the run graded with ${run.grader}; the signal says ${data.grader}`);
  if (published !== null || asked) {
    const expected = questionHash(run.key, question.id);
    if (published !== expected)
      return fail(
        'questionHash',
        `expected ${expected} for the question this run asked, published ${published ?? 'none'}`,
      );
  }

  const response = input.responseOf?.(s) ?? null;
  if (response !== null && data.responseHash) {
    const expected = data.responseHash.startsWith('sha256:')
      ? responseHash(response)
      : input.keyedResponseHash?.(run.key, s, response);
    if (expected !== undefined) {
      responseChecked = true;
      if (expected !== data.responseHash)
        return fail('responseHash', 'the supplied response does not hash to the published responseHash');
      const regraded = gradeQuestion(question, response, run.grader);
      if (regraded.answer !== answer)
        return fail(
          'answer',
          `grading the response gives ${regraded.answer ?? 'no answer'}, published ${answer ?? 'none'}`,
        );
      if (regraded.outcome !== outcome)
        return fail('outcome', `grading the response gives ${regraded.outcome}, published ${outcome}`);
    }
  }

  if (GRADED.has(outcome)) {
    if (answer === null) return fail('answer', `outcome ${outcome} without an answer token`);
    const regraded = gradeQuestion(question, answer, run.grader);
    if (regraded.outcome !== outcome)
      return fail('answer', `answer ${answer} grades ${regraded.outcome}, published ${outcome}`);
  } else if (answer !== null) {
    // Nothing was extracted (unparseable, empty) or nothing came back (failures): there is no token to publish.
    return fail('answer', `outcome ${outcome} with an answer token`);
  }
  if (s.status !== undefined && isOutcome(outcome) && s.status !== statusForOutcome(outcome)) {
    return fail('status', `outcome ${outcome} has status ${statusForOutcome(outcome)}, published ${s.status}`);
  }
  const expectedScore = outcome === 'correct' ? 100 : 0;
  if (data.score !== expectedScore)
    return fail('score', `outcome ${outcome} scores ${expectedScore}, published ${data.score ?? 'none'}`);
  return { responseChecked };
}
