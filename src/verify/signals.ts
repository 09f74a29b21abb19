/**
 * Verification of published signals against their run's reveal, from public data only (plus, optionally, a private
 * science bank and raw responses). Pure: no I/O except reading the bundled science bank when a reveal names it.
 *
 * Each signal gets one verdict saying what was checked, never more: `re-derived` when the question (from the reveal's
 * seed, the subject and the bank), the expected answer and the grade were all recomputed and agree; `commitment-checked`
 * when only a hash could be checked (an unparseable reply's question hash; a response hash against a journal's
 * response when the reveal has no seed); `not-checkable` with the reason (nothing was asked, no reveal, a private bank
 * not held, an availability probe); `mismatch` naming the field that disagrees — including a signal submitted after
 * its run's reveal, and a subject its cited registry did not list when the run started. Conflicting copies of a
 * signal (equivocation) are reported beside the verdicts.
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
import { consensusIso } from '../core/consensus-time.js';
import {
  isLater,
  unlistedSubjects,
  type Equivocation,
  type RegistryCheck,
  type Verdict,
  type VerdictCounts,
} from './findings.js';

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
  /** Its consensus time (`seconds.nanos`): a signal later than its run's reveal is reported. */
  consensusTimestamp?: string;
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
  consensusTimestamp?: string;
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
  /** The registries the runs cite, read as of each run's start (verify-signals.ts reads them). */
  registries?: Iterable<RegistryCheck>;
  /** Conflicting copies of signals the reader found. */
  equivocations?: Iterable<Equivocation>;
  /** Score records to recompute from their explanations. */
  scores?: Iterable<ScoreRecordLike>;
}

export { VERDICTS, type Verdict, type VerdictCounts } from './findings.js';
export type MismatchField =
  | 'questionHash'
  | 'answer'
  | 'outcome'
  | 'status'
  | 'score'
  | 'responseHash'
  | 'grader'
  /** Submitted after the run's reveal. */
  | 'consensusTimestamp'
  /** Not listed by the registry the run cites when the run started. */
  | 'subject';
export type NotCheckableReason =
  | 'probe'
  | 'unknown-signal'
  | 'not-asked'
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
  kind: 'math' | 'science' | 'probe' | 'other';
  sequenceNumber?: number;
  index?: number;
  verdict: Verdict;
  /** The first published field that disagrees (mismatch). */
  field?: MismatchField;
  /** Why nothing could be re-derived (not-checkable). */
  reason?: NotCheckableReason;
  /** One line for people: what was checked, or expected and published. Never a question, an option or a response. */
  detail: string;
  /** A raw response was supplied and its hash checked. */
  responseChecked: boolean;
}

export interface RunVerification extends VerdictCounts {
  run: string;
  revealed: boolean;
  /** Where the reveal that counts was read, and when. */
  revealSequence?: number;
  revealConsensusTimestamp?: string;
  /** Conflicting copies of this run's signals. */
  equivocation: number;
  /** The registries the run cites, read as of its start. */
  registries: RegistryCheck[];
}

export interface VerifyReport {
  counts: VerdictCounts & { equivocation: number };
  /** Per run: whether it is revealed and how its signals fared. */
  runs: RunVerification[];
  signals: SignalVerification[];
  equivocations: Equivocation[];
  scores: Array<ScoreCheck & { subject?: string }>;
}

interface Blocked {
  reason: NotCheckableReason;
  detail: string;
}

/** A revealed run: what re-derives its questions, or why its signals cannot be re-derived (and its key, if any). */
type RunContext = { reveal: VerifiableReveal } & (
  | { blocked: Blocked; key?: Buffer }
  | {
      blocked?: undefined;
      key: Buffer;
      seed: string;
      grader: GraderId;
      bank?: readonly ScienceBankEntry[];
      scienceBlocked?: Blocked;
    }
);
type OpenRun = Extract<RunContext, { seed: string }>;

const noVerdicts = (): VerdictCounts => ({ 're-derived': 0, 'commitment-checked': 0, 'not-checkable': 0, mismatch: 0 });

export function verifySignals(input: VerifyInput): VerifyReport {
  const contexts = new Map<string, RunContext>();
  const banks = new BankChooser(input.scienceBank);
  for (const reveal of input.reveals) {
    const key = revealKey(reveal.run, reveal.payer);
    if (!contexts.has(key)) contexts.set(key, { reveal, ...runContext(reveal, banks) });
  }
  const contextOf = (s: { run: string; payer?: string | undefined }) =>
    contexts.get(revealKey(s.run, s.payer)) ?? contexts.get(revealKey(s.run, undefined));
  const registries = [...(input.registries ?? [])];
  const unlisted = unlistedSubjects(registries);

  const signals: SignalVerification[] = [];
  const runs = new Map<string, RunVerification>();
  const runOf = (s: { run: string; payer?: string | undefined }): RunVerification => {
    let run = runs.get(s.run);
    if (!run) {
      const reveal = contextOf(s)?.reveal;
      run = {
        run: s.run,
        revealed: reveal !== undefined,
        ...(reveal?.sequenceNumber !== undefined ? { revealSequence: reveal.sequenceNumber } : {}),
        ...(reveal?.consensusTimestamp !== undefined ? { revealConsensusTimestamp: reveal.consensusTimestamp } : {}),
        ...noVerdicts(),
        equivocation: 0,
        registries: registries.filter((r) => r.run === s.run),
      };
      runs.set(s.run, run);
    }
    return run;
  };
  for (const s of input.signals) {
    const v = verifyOne(s, contextOf(s), unlisted.get(s.run)?.get(s.subject), input);
    signals.push(v);
    runOf(s)[v.verdict]++;
  }
  const equivocations = [...(input.equivocations ?? [])];
  for (const e of equivocations) runOf(e).equivocation++;
  const counts = { ...noVerdicts(), equivocation: equivocations.length };
  for (const v of signals) counts[v.verdict]++;
  return {
    counts,
    runs: [...runs.values()].sort((a, b) => (a.run < b.run ? -1 : a.run > b.run ? 1 : 0)),
    signals,
    equivocations,
    scores: checkPublishedScores(input.scores ?? []).results,
  };
}

function revealKey(run: string, payer: string | undefined): string {
  return `${run}\u0000${payer ?? ''}`;
}

type Context = RunContext extends infer C ? (C extends unknown ? Omit<C, 'reveal'> : never) : never;

function runContext(reveal: VerifiableReveal, banks: BankChooser): Context {
  let key: Buffer;
  try {
    key = decodeRunKey(reveal.key);
  } catch {
    return { blocked: { reason: 'bad-key', detail: 'the reveal key is not a 32-byte base64url key' } };
  }
  if (reveal.seed === undefined || reveal.grader === undefined || reveal.generator === undefined) {
    return {
      key,
      blocked: {
        reason: 'reveal-without-seed',
        detail: 'a v1 reveal publishes only the key: questions cannot be re-derived',
      },
    };
  }
  if (reveal.generator !== QUESTION_GENERATOR) {
    return {
      key,
      blocked: {
        reason: 'unknown-generator',
        detail: `questions were derived by ${reveal.generator}; this hcs25 derives ${QUESTION_GENERATOR}`,
      },
    };
  }
  if (!isGraderId(reveal.grader))
    return { key, blocked: { reason: 'unknown-grader', detail: `grader ${reveal.grader} is not known to this hcs25` } };
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

const KIND_OF: Record<string, SignalVerification['kind']> = {
  [SIGNAL_IDS_V2.availability]: 'probe',
  [SIGNAL_IDS_V2.math]: 'math',
  [SIGNAL_IDS_V2.science]: 'science',
};

function verifyOne(
  s: VerifiableSignal,
  run: RunContext | undefined,
  unlisted: RegistryCheck | undefined,
  input: VerifyInput,
): SignalVerification {
  const kind = KIND_OF[canonicalSignalId(s.signal)] ?? 'other';
  const base = {
    run: s.run,
    subject: s.subject,
    signal: s.signal,
    kind,
    ...(s.sequenceNumber !== undefined ? { sequenceNumber: s.sequenceNumber } : {}),
    ...(s.index !== undefined ? { index: s.index } : {}),
    responseChecked: false,
  };
  const notCheckable = (reason: NotCheckableReason, detail: string): SignalVerification => ({
    ...base,
    verdict: 'not-checkable',
    reason,
    detail,
  });
  const mismatch = (field: MismatchField, detail: string, responseChecked = false): SignalVerification => ({
    ...base,
    verdict: 'mismatch',
    field,
    detail,
    responseChecked,
  });
  // How it was published comes first: after the reveal, anyone could compute what a signal should say.
  if (run && isLater(s.consensusTimestamp, run.reveal.consensusTimestamp))
    return mismatch(
      'consensusTimestamp',
      `submitted at ${consensusIso(s.consensusTimestamp ?? '')}, after the run's reveal (sequence ${run.reveal.sequenceNumber ?? '?'}, ${consensusIso(run.reveal.consensusTimestamp ?? '')})`,
    );
  if (unlisted)
    return mismatch('subject', `${unlisted.source} did not list this subject when the run started (${unlisted.asOf})`);
  if (kind === 'probe')
    return notCheckable('probe', 'an availability probe measures the agent at the time: nothing re-derives it');
  if (kind === 'other') return notCheckable('unknown-signal', `signal ${s.signal} is not one this hcs25 re-derives`);

  if (!run) return notCheckable('no-reveal', 'the run has not been revealed');
  const blocked = run.blocked ?? (kind === 'science' ? run.scienceBlocked : undefined);
  if (blocked) {
    // The question cannot be re-derived; a response hash can still be checked against a raw response held.
    const committed = responseCommitment(s, run.key, input);
    if (committed === 'mismatch')
      return mismatch('responseHash', 'the supplied response does not hash to the published responseHash', true);
    if (committed === 'match')
      return {
        ...base,
        verdict: 'commitment-checked',
        reason: blocked.reason,
        detail: `${blocked.detail}; the response hash matches the response held`,
        responseChecked: true,
      };
    return notCheckable(blocked.reason, blocked.detail);
  }

  const open = run as OpenRun;
  const question = questionFor(kind, s.subject, open.seed, open.bank ?? []);
  const found = check(s, question, open, input);
  if (found.mismatch) return mismatch(found.mismatch.field, found.mismatch.detail, found.responseChecked);
  const checked = { ...base, responseChecked: found.responseChecked };
  const outcome = s.data?.outcome ?? '';
  if (outcome === 'skipped')
    return {
      ...checked,
      ...notCheckable('not-asked', 'the eval was skipped: nothing was asked'),
      responseChecked: false,
    };
  if (GRADED.has(outcome) || found.responseChecked)
    return {
      ...checked,
      verdict: 're-derived',
      detail: 'question, expected answer and grade recomputed from the reveal: they agree',
    };
  return {
    ...checked,
    verdict: 'commitment-checked',
    detail: isOutcome(outcome)
      ? `outcome ${outcome}: no answer to grade; the question hash matches the re-derived question`
      : `outcome ${outcome} is not one this hcs25 knows; the question hash matches the re-derived question`,
  };
}

/** A response held for a signal against its response hash: 'match', 'mismatch', or undefined (nothing to check). */
function responseCommitment(
  s: VerifiableSignal,
  key: Buffer | undefined,
  input: VerifyInput,
): 'match' | 'mismatch' | undefined {
  const published = s.data?.responseHash;
  const response = input.responseOf?.(s) ?? null;
  if (response === null || !published) return undefined;
  const expected = published.startsWith('sha256:')
    ? responseHash(response)
    : key && input.keyedResponseHash?.(key, s, response);
  if (!expected) return undefined;
  return expected === published ? 'match' : 'mismatch';
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
  const committed = responseCommitment(s, run.key, input);
  if (committed !== undefined && response !== null) {
    responseChecked = true;
    if (committed === 'mismatch')
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
  // An outcome a later version defines: only the question hash (and a response held) say anything about it.
  if (!isOutcome(outcome)) return { responseChecked };

  if (GRADED.has(outcome)) {
    if (answer === null) return fail('answer', `outcome ${outcome} without an answer token`);
    const regraded = gradeQuestion(question, answer, run.grader);
    if (regraded.outcome !== outcome)
      return fail('answer', `answer ${answer} grades ${regraded.outcome}, published ${outcome}`);
  } else if (answer !== null) {
    // Nothing was extracted (unparseable, empty) or nothing came back (failures): there is no token to publish.
    return fail('answer', `outcome ${outcome} with an answer token`);
  }
  if (s.status !== undefined && s.status !== statusForOutcome(outcome)) {
    return fail('status', `outcome ${outcome} has status ${statusForOutcome(outcome)}, published ${s.status}`);
  }
  const expectedScore = outcome === 'correct' ? 100 : 0;
  if (data.score !== expectedScore)
    return fail('score', `outcome ${outcome} scores ${expectedScore}, published ${data.score ?? 'none'}`);
  return { responseChecked };
}
