/**
 * Signals → per-subject HCS-25 components → the HCS-25 aggregation → an explainable breakdown.
 *
 * Built for registry scale (a million signals, 190,000 subjects): the config is validated and laid out once
 * (`compileScoringConfig`), each signal's times are parsed once into typed columns, and signals are grouped by two
 * counting sorts, so the cost follows the number of signals rather than per-subject overhead.
 *
 * Pure and deterministic: the same signals (in any order), config and `now` give byte-identical JSON. Signals are
 * ordered by sequence number, subjects by score, ties by confidence, then name, then subject id (code-unit order,
 * never locale order), and every number that leaves here is rounded.
 */
import { componentValue, isApplicable, round2, validateAggregation, type AdapterInput, type ComponentInput } from './aggregate.js';
import { scoringConfigDigest, type AdapterConfig, type ComponentConfig, type ScoringConfig, type WindowConfig } from './scoring-config.js';
import { displayName, uaidLabel } from './labels.js';
import { consensusMs } from './reader.js';
import type { ReadSignal } from './types.js';
import { uaidRouting, type UaidRouting } from '../registry/uaid.js';
import { SIGNAL_STATUSES, type SignalStatus } from '../signals/protocol.js';
import type { SignalMessage } from '../signals/schema-v1.js';
import { canonicalSignalId, type SignalMessageV2 } from '../signals/schema-v2.js';

export interface ScoreOptions {
  /** The instant scores are computed for: freshness is measured against it, later signals are ignored. */
  now: Date;
  /** The publisher allow-list the signals were filtered by; empty or absent means any publisher was accepted. */
  publishers?: readonly string[];
  /** Signal topic, shown in reports. */
  topic?: string;
  /** Counts of rejected messages by reason, from the reader, shown in reports. */
  rejected?: Readonly<Record<string, number>>;
  /**
   * Display names by subject, from what the caller knows locally (e.g. the registry entries it evaluated). Names are
   * not on-chain and not part of the score; views fall back to the UAID's native id.
   */
  labels?: Readonly<Record<string, string>>;
}

export interface ComponentBreakdown {
  adapterId: string;
  value: number;
  status: SignalStatus;
  /** Signals in the window that carried a measurement (status other than `missing`). */
  samples: number;
  /** Newest observation in the window (ISO), or null. */
  newestAt: string | null;
  /** A non-scorable component that was unavailable and left out of its adapter. */
  omitted?: true;
  /** Synthesized by HCS-25's default-component rule (an applicable adapter without output). */
  synthesized?: true;
  /** A stale component's value before m_stale (what a score explanation publishes); `value` is after it. */
  beforeStale?: number;
}

export interface AdapterBreakdown {
  adapterId: string;
  contributionMode: AdapterConfig['contributionMode'];
  weight: number;
  applicable: boolean;
  inDenominator: boolean;
  total: number | null;
  confidence: number | null;
}

export interface LatencySummary {
  p50Ms: number;
  p95Ms: number;
  samples: number;
}

export interface SubjectScore {
  subject: string;
  /** A display name the caller supplied (ScoreOptions.labels), if any. */
  label?: string;
  registry: string | null;
  protocol: string | null;
  nativeId: string | null;
  trustScores: { total: number; [adapterId: string]: number };
  trustConfidence: number;
  trustScoreConfigVersion: number;
  /** Digest of the scoring config used (scoring-config.ts `scoringConfigDigest`), for the score explanation. */
  trustScoreConfigDigest: string;
  /** HCS-25 m_stale of that config. */
  staleMultiplier: number;
  trustScoreUpdatedAt: string;
  adapters: AdapterBreakdown[];
  components: Record<string, ComponentBreakdown>;
  latency: LatencySummary | null;
  counts: { signals: number; bySignal: Record<string, number>; runs: number; publishers: number; firstAt: string; lastAt: string };
}

export interface ScoreReport {
  generatedAt: string;
  trustScoreConfigVersion: number;
  topic: string | null;
  /** `none` means no allow-list: signals from any paying account were accepted (spoofable; say so to users). */
  publishers: { filter: 'allow-list' | 'none'; accounts: string[] };
  window: WindowConfig;
  freshnessSeconds: number;
  staleMultiplier: number;
  counts: { subjects: number; signals: number; ignoredAfterNow: number; rejected: Record<string, number> };
  subjects: SubjectScore[];
}

/** A component of a compiled config: its signal id in catalog form and its window resolved. */
interface CompiledComponent {
  readonly key: string;
  readonly signal: string;
  readonly window: WindowConfig;
  readonly nonScorable: boolean;
}

interface CompiledAdapter {
  readonly config: AdapterConfig;
  /** The adapter as the aggregation takes it, with one subject's components. */
  readonly input: (components: ComponentInput[]) => AdapterInput;
  readonly components: readonly CompiledComponent[];
  readonly defaultKey: string;
}

/** A scoring config validated and laid out once; every subject's scoring reads it. */
export interface CompiledScoringConfig {
  readonly config: ScoringConfig;
  /** `scoringConfigDigest(config)`. */
  readonly digest: string;
  readonly adapters: readonly CompiledAdapter[];
  /** The latency signal id in catalog form. */
  readonly latencySignal: string;
  /** Every component key a breakdown can hold (components and default components), in code-unit order. */
  readonly componentKeys: readonly string[];
}

const compiledConfigs = new WeakMap<ScoringConfig, CompiledScoringConfig>();

/**
 * Validates a scoring config as the aggregation does and lays it out for scoring. `computeScores` calls this and
 * remembers the result per config object, so scoring in batches with one config pays for it once; a config is
 * therefore not to be mutated after its first use (parsed configs and the frozen default never are).
 */
export function compileScoringConfig(config: ScoringConfig): CompiledScoringConfig {
  const known = compiledConfigs.get(config);
  if (known) return known;
  const adapters: CompiledAdapter[] = config.adapters.map((adapter) => ({
    config: adapter,
    // One object shape for every subject (absent lists are undefined, which the aggregation treats as absent).
    input: (components) => ({
      adapterId: adapter.adapterId,
      contributionMode: adapter.contributionMode,
      weight: adapter.weight,
      includeRegistries: adapter.includeRegistries,
      excludeRegistries: adapter.excludeRegistries,
      protocols: adapter.protocols,
      excludeProtocols: adapter.excludeProtocols,
      defaultComponentKey: adapter.defaultComponentKey,
      components,
    }),
    components: adapter.components.map((c: ComponentConfig) => ({
      key: c.key,
      signal: canonicalSignalId(c.signal),
      window: c.window ?? config.window,
      nonScorable: c.nonScorableWhenUnavailable === true,
    })),
    defaultKey: adapter.defaultComponentKey ?? `${adapter.adapterId}.score`,
  }));
  validateAggregation({
    trustScoreConfigVersion: config.trustScoreConfigVersion,
    staleMultiplier: config.staleMultiplier,
    adapters: adapters.map((a) => a.input(a.components.map((c) => ({ key: c.key, value: 0, status: 'ok' as const })))),
  });
  const componentKeys = [...new Set(adapters.flatMap((a) => [...a.components.map((c) => c.key), a.defaultKey]))].sort(byCodeUnit);
  const out: CompiledScoringConfig = { config, digest: scoringConfigDigest(config), adapters, latencySignal: canonicalSignalId(config.latency.signal), componentKeys };
  compiledConfigs.set(config, out);
  return out;
}

/**
 * Scores signals held in memory: a thin wrapper over {@link ScoreAccumulator}, which `hcs25 scores` feeds as the
 * reader yields signals so that no signal is held.
 */
export function computeScores(signals: Iterable<ReadSignal>, config: ScoringConfig, options: ScoreOptions): ScoreReport {
  const scoring = new ScoreAccumulator(config, options.now, Array.isArray(signals) ? signals.length : undefined);
  for (const s of signals) scoring.add(s);
  return scoring.finish(options);
}

const STATUS_CODES: Readonly<Record<SignalStatus, number>> = Object.fromEntries(SIGNAL_STATUSES.map((s, i) => [s, i])) as Record<SignalStatus, number>;
const MISSING = STATUS_CODES.missing;
/** The statuses by first letter (each differs): no property lookup by a string fresh from JSON.parse per signal. */
const STATUS_BY_INITIAL = new Int8Array(128).fill(-1);
for (const status of SIGNAL_STATUSES) STATUS_BY_INITIAL[status.charCodeAt(0)] = STATUS_CODES[status];
if (new Set(SIGNAL_STATUSES.map((s) => s[0])).size !== SIGNAL_STATUSES.length) throw new Error('signal statuses must differ in their first letter');

function statusCode(status: SignalStatus): number {
  return STATUS_BY_INITIAL[status.charCodeAt(0)]!;
}
const OK = STATUS_CODES.ok;
const STALE = STATUS_CODES.stale;

/**
 * The scored signals, one typed column per field (about 60 bytes a signal, no object per signal), and `order`: row
 * numbers grouped by subject, then signal id (code-unit order), then sequence number (ties in input order).
 * `subjectStart[s]..subjectStart[s + 1]` are subject s's positions in `order`.
 */
interface SignalTable {
  n: number;
  ignoredAfterNow: number;
  subjects: string[];
  /** Catalog signal ids by rank (code-unit order). */
  signalIds: string[];
  subject: Int32Array;
  signal: Int32Array;
  run: Int32Array;
  payer: Int32Array;
  seq: Float64Array;
  /** min(fetchedAt, consensus): see scoring-config.ts. */
  observedMs: Float64Array;
  consensusMs: Float64Array;
  score: Float64Array;
  latencyMs: Float64Array;
  status: Uint8Array;
  /** Probes: reachable. Evals: graded (status ok). */
  measured: Uint8Array;
  runs: number;
  payers: number;
  order: Int32Array;
  subjectStart: Int32Array;
}

type Columns = Pick<SignalTable, 'subject' | 'signal' | 'run' | 'payer' | 'seq' | 'observedMs' | 'consensusMs' | 'score' | 'latencyMs' | 'status' | 'measured'>;

function allocate(capacity: number, from?: Columns): Columns {
  const grown = <T extends Int32Array | Float64Array | Uint8Array>(make: new (n: number) => T, old: T | undefined): T => {
    const a = new make(capacity);
    if (old) a.set(old);
    return a;
  };
  return {
    subject: grown(Int32Array, from?.subject),
    signal: grown(Int32Array, from?.signal),
    run: grown(Int32Array, from?.run),
    payer: grown(Int32Array, from?.payer),
    seq: grown(Float64Array, from?.seq),
    observedMs: grown(Float64Array, from?.observedMs),
    consensusMs: grown(Float64Array, from?.consensusMs),
    score: grown(Float64Array, from?.score),
    latencyMs: grown(Float64Array, from?.latencyMs),
    status: grown(Uint8Array, from?.status),
    measured: grown(Uint8Array, from?.measured),
  };
}

/** Id of a string in a table of distinct strings, added if new. */
function intern(ids: Map<string, number>, value: string): number {
  let id = ids.get(value);
  if (id === undefined) ids.set(value, (id = ids.size));
  return id;
}

/**
 * Scoring as a fold: `add` takes signals one at a time, as the reader yields them, and keeps about 60 bytes per signal
 * in typed columns (no object per signal, times parsed once, strings interned); `finish` groups them by two counting
 * sorts and builds each subject's score and explanation. So `hcs25 scores` never holds the signals themselves, and the
 * cost follows the number of signals rather than per-subject overhead.
 *
 * Any order of signals gives the same report (they are ordered by sequence number in `finish`). One accumulator
 * gives one report: `finish` once.
 */
export class ScoreAccumulator {
  private readonly compiled: CompiledScoringConfig;
  private readonly nowMs: number;
  private capacity: number;
  private c: Columns;
  private n = 0;
  private ignoredAfterNow = 0;
  private seqSorted = true;
  private finished = false;
  private readonly subjectIds = new Map<string, number>();
  /** Subjects by id, and the id of the subject that last came after each (-1: none yet). */
  private readonly subjectNames: string[] = [];
  private nextSubject = new Int32Array(1024).fill(-1);
  private readonly rawSignalIds = new Map<string, number>();
  private readonly signalIds = new Map<string, number>();
  private readonly runIds = new Map<string, number>();
  private readonly payerIds = new Map<string, number>();
  private readonly recentSignals: string[] = [];
  private readonly recentSignalIds: number[] = [];
  private lastSubject: string | undefined;
  private lastSubjectId = 0;
  private lastRun: string | undefined;
  private lastRunId = 0;
  private lastPayer: string | undefined;
  private lastPayerId = 0;
  private lastTimestamp: string | undefined;
  private lastTimestampMs = 0;
  private lastFetchedAt: string | undefined;
  private lastFetchedMs = 0;

  /** `expected`: how many signals will come, when known (sizes the columns once). */
  constructor(
    private readonly config: ScoringConfig,
    private readonly now: Date,
    expected?: number,
  ) {
    this.nowMs = now.getTime();
    if (!Number.isFinite(this.nowMs)) throw new RangeError('computeScores: now is not a valid date');
    this.compiled = compileScoringConfig(config);
    this.capacity = Math.max(1, expected ?? 1024);
    this.c = allocate(this.capacity);
  }

  /** Signals taken so far (those after `now` are counted apart and not kept). */
  get size(): number {
    return this.n;
  }

  add(s: ReadSignal): void {
    // The reader's ReadSignals carry the time parsed (parsing it again cost a third of this fold); one made by hand may not.
    const ms = s.consensusMs;
    this.addSignal(s.message, s.sequenceNumber, typeof ms === 'number' ? ms : this.parsedConsensus(s.consensusTimestamp), s.payerAccountId);
  }

  /** A pack's signals share their message's consensus time, and comparing text is cheaper than parsing it. */
  private parsedConsensus(timestamp: string): number {
    if (timestamp !== this.lastTimestamp) this.lastTimestampMs = consensusMs((this.lastTimestamp = timestamp));
    return this.lastTimestampMs;
  }

  /**
   * The compact form of `add`: a signal as the reader has it in hand (its validated message, and of its transaction
   * the sequence number, consensus time in ms and payer), so `hcs25 scores` folds each message as it is read and
   * builds no ReadSignal (nor its ISO time). `add(s)` is this with `consensusMs(s.consensusTimestamp)`.
   */
  addSignal(m: SignalMessage | SignalMessageV2, sequenceNumber: number, cMs: number, payerAccountId: string): void {
    if (!(cMs <= this.nowMs)) {
      this.ignoredAfterNow++;
      return;
    }
    const n = this.n;
    if (n === this.capacity) this.c = allocate((this.capacity *= 2), this.c);
    const c = this.c;
    // Neighbouring signals mostly share subject, run and payer, and a topic uses a handful of signal ids: comparing
    // text is cheaper than hashing another copy of it.
    if (m.subject !== this.lastSubject) this.lastSubjectId = this.subjectIdOf(m.subject);
    if (m.run !== this.lastRun) this.lastRunId = intern(this.runIds, (this.lastRun = m.run));
    if (payerAccountId !== this.lastPayer) this.lastPayerId = intern(this.payerIds, (this.lastPayer = payerAccountId));
    // A loop, not indexOf: the builtin's call and its generic equality cost a fifth of this method.
    const signal = m.signal;
    const recentSignals = this.recentSignals;
    let recent = -1;
    for (let k = 0; k < recentSignals.length; k++) {
      if (recentSignals[k] === signal) {
        recent = k;
        break;
      }
    }
    c.signal[n] = recent >= 0 ? this.recentSignalIds[recent]! : this.signalIdOf(signal);
    c.subject[n] = this.lastSubjectId;
    c.run[n] = this.lastRunId;
    c.payer[n] = this.lastPayerId;
    const data = m.data;
    const probe = 'reachable' in data;
    // A failed probe is a measurement (status ok, score 0), as the reference maps it and v2 signals publish it;
    // v1 published it as timeout/error, which here would mean nothing was measured.
    const failedProbe = probe && !data.reachable && (m.status === 'timeout' || m.status === 'error');
    c.seq[n] = sequenceNumber;
    if (n > 0 && sequenceNumber < c.seq[n - 1]!) this.seqSorted = false;
    // A run stamps many signals with one fetchedAt (it formats one per millisecond).
    if (m.fetchedAt !== this.lastFetchedAt) this.lastFetchedMs = Date.parse((this.lastFetchedAt = m.fetchedAt));
    c.observedMs[n] = Math.min(cMs, this.lastFetchedMs);
    c.consensusMs[n] = cMs;
    c.status[n] = failedProbe ? OK : statusCode(m.status);
    c.score[n] = data.score;
    c.latencyMs[n] = data.latencyMs;
    c.measured[n] = (probe ? data.reachable : m.status === 'ok') ? 1 : 0;
    this.n = n + 1;
  }

  /** The report over every signal added. */
  finish(options: Omit<ScoreOptions, 'now'> = {}): ScoreReport {
    if (this.finished) throw new Error('ScoreAccumulator.finish: already finished');
    this.finished = true;
    const { config, compiled, nowMs } = this;
    const table = this.table();
    const nowIso = this.now.toISOString();
    const scorer = new SubjectScorer(table, compiled, nowMs, nowIso);

    const count = table.subjects.length;
    const scores = new Array<SubjectScore>(count);
    const sortNames = new Array<string>(count);
    for (let i = 0; i < count; i++) {
      const subject = table.subjects[i]!;
      const uaid = uaidRouting(subject);
      const scored = scorer.score(i, uaid);
      const given = options.labels?.[subject];
      const label = given === undefined ? undefined : displayName(given);
      scores[i] = label ? { ...scored, label } : scored;
      sortNames[i] = label ?? uaidLabel(uaid, subject);
    }
    const subjects = rankSubjects(scores, sortNames);

    const accounts = [...new Set(options.publishers ?? [])].sort(byCodeUnit);
    return {
      generatedAt: nowIso,
      trustScoreConfigVersion: config.trustScoreConfigVersion,
      topic: options.topic ?? null,
      publishers: { filter: accounts.length > 0 ? 'allow-list' : 'none', accounts },
      window: config.window,
      freshnessSeconds: config.freshnessSeconds,
      staleMultiplier: config.staleMultiplier,
      counts: { subjects: subjects.length, signals: table.n, ignoredAfterNow: table.ignoredAfterNow, rejected: sortedRecord(options.rejected ?? {}) },
      subjects,
    };
  }

  /**
   * Runs publish their subjects in much the same order each time: the subject that came after the previous one last
   * time is compared first, one string comparison, before a lookup in the table of every subject (a registry's
   * subjects make a table far larger than the caches, so a lookup costs ten times that comparison).
   */
  private subjectIdOf(subject: string): number {
    const previous = this.lastSubject === undefined ? -1 : this.lastSubjectId;
    const guess = previous >= 0 ? this.nextSubject[previous]! : -1;
    let id: number;
    if (guess >= 0 && this.subjectNames[guess] === subject) id = guess;
    else {
      id = intern(this.subjectIds, subject);
      if (id === this.subjectNames.length) {
        this.subjectNames.push(subject);
        if (id === this.nextSubject.length) {
          const grown = new Int32Array(id * 2).fill(-1);
          grown.set(this.nextSubject);
          this.nextSubject = grown;
        }
      }
      if (previous >= 0) this.nextSubject[previous] = id;
    }
    this.lastSubject = subject;
    return id;
  }

  // v1 and v2 ids of one signal (simple-evals.math, simple-evals.a2a_math) are one series.
  private signalIdOf(raw: string): number {
    let id = this.rawSignalIds.get(raw);
    if (id === undefined) this.rawSignalIds.set(raw, (id = intern(this.signalIds, canonicalSignalId(raw))));
    if (this.recentSignals.length < 8) {
      this.recentSignals.push(raw);
      this.recentSignalIds.push(id);
    }
    return id;
  }

  /** The columns grouped for scoring: two counting sorts, cost linear in signals. */
  private table(): SignalTable {
    const { n, c, signalIds, subjectIds } = this;
    // Signal ids ranked in code-unit order, so a subject's groups come out in the order its counts list them.
    const names = [...signalIds.keys()];
    const ranked = names.slice().sort(byCodeUnit);
    const rankOf = new Int32Array(names.length);
    ranked.forEach((name, rank) => (rankOf[signalIds.get(name)!] = rank));
    for (let i = 0; i < n; i++) c.signal[i] = rankOf[c.signal[i]!]!;

    // Topics are read in sequence order, so this sort rarely runs; stable, as the grouping sorts below are.
    let rows: Int32Array = new Int32Array(n);
    for (let i = 0; i < n; i++) rows[i] = i;
    if (!this.seqSorted) {
      const seq = c.seq;
      rows = Int32Array.from(Array.from(rows).sort((a, b) => seq[a]! - seq[b]!));
    }
    rows = countingSort(rows, c.signal, ranked.length);
    const subjectStart = new Int32Array(subjectIds.size + 1);
    const order = countingSort(rows, c.subject, subjectIds.size, subjectStart);
    return { n, ignoredAfterNow: this.ignoredAfterNow, subjects: this.subjectNames, signalIds: ranked, ...c, runs: this.runIds.size, payers: this.payerIds.size, order, subjectStart };
  }
}

/** Score and confidence are rounded to cents, so a subject's place by both is one integer in [0, 2^PLACE_BITS). */
const PLACE_BITS = 20;
if (10_001 * 101 > 2 ** PLACE_BITS) throw new Error('a place must fit PLACE_BITS');
/** Which 32-bit word of a 64-bit sort key is its high one. */
const HIGH_WORD = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1 ? 1 : 0;

/**
 * Subjects best first. Ties: higher confidence first, then the name people see (label, else native id), then the
 * UAID: a total order, so the result does not depend on the order signals came in.
 *
 * Each subject gets one 64-bit key, sorted by the engine's own typed-array sort (no comparator called, which for a
 * registry's 190,000 subjects mostly tied on score costs more than everything else here): from the top, its place by
 * score and confidence (20 bits), the first characters of its name after the prefix all names share, each by its rank
 * among the characters found there (0: the name ended), and its row, so keys differ. Only subjects whose keys agree
 * on all but the row compare names and UAIDs.
 */
function rankSubjects(scores: SubjectScore[], names: string[]): SubjectScore[] {
  const count = scores.length;
  const byName = (a: number, b: number): number => byCodeUnit(names[a]!, names[b]!) || byCodeUnit(scores[a]!.subject, scores[b]!.subject);
  const place = new Int32Array(count);
  for (let i = 0; i < count; i++) {
    const total = Math.round(scores[i]!.trustScores.total * 100);
    const confidence = Math.round(scores[i]!.trustConfidence * 100);
    // Only a config built by hand, past the schema (a stale factor above 1), can place a subject out of range.
    if (!(total >= 0 && total <= 10_000 && confidence >= 0 && confidence <= 100)) {
      const by = (a: number, b: number): number =>
        scores[b]!.trustScores.total - scores[a]!.trustScores.total || scores[b]!.trustConfidence - scores[a]!.trustConfidence || byName(a, b);
      return Array.from({ length: count }, (_, k) => k)
        .sort(by)
        .map((k) => scores[k]!);
    }
    place[i] = (10_000 - total) * 101 + (100 - confidence);
  }
  if (count === 0) return [];

  let common = names[0]!.length;
  for (let i = 1; i < count && common > 0; i++) {
    const name = names[i]!;
    const lead = names[0]!;
    let c = 0;
    while (c < common && c < name.length && name.charCodeAt(c) === lead.charCodeAt(c)) c++;
    common = c;
  }
  const rowBits = Math.max(1, Math.ceil(Math.log2(count)));
  const nameBits = 64 - PLACE_BITS - rowBits;
  // The characters that stand in the first `width` places after the prefix, ranked from 1 (0: the name ended). The
  // width is first guessed from a sample of names (every name scanned that far costs more than the sort); until it
  // fits the characters found, it shrinks and the names are scanned again.
  const rankOf = new Uint16Array(65_536);
  let found = 0;
  for (let i = 0; i < Math.min(count, 1024); i++) {
    const name = names[i]!;
    const end = Math.min(name.length, common + nameBits);
    for (let k = common; k < end; k++) if (rankOf[name.charCodeAt(k)] === 0) rankOf[name.charCodeAt(k)] = ++found;
  }
  let width = Math.floor(nameBits / Math.max(1, Math.ceil(Math.log2(found + 1))));
  for (;;) {
    for (let i = 0; i < count; i++) {
      const name = names[i]!;
      const end = Math.min(name.length, common + width);
      for (let k = common; k < end; k++) if (rankOf[name.charCodeAt(k)] === 0) rankOf[name.charCodeAt(k)] = ++found;
    }
    const fits = Math.floor(nameBits / Math.max(1, Math.ceil(Math.log2(found + 1))));
    if (fits >= width) break;
    width = fits;
  }
  let rank = 0;
  for (let code = 0; code < 65_536; code++) if (rankOf[code] !== 0) rankOf[code] = ++rank;
  const bits = Math.max(1, Math.ceil(Math.log2(rank + 1)));
  const charScale = 2 ** bits;
  const padScale = 2 ** (nameBits - width * bits);
  const lowNameScale = 2 ** (nameBits - (32 - PLACE_BITS));
  const rowScale = 2 ** rowBits;

  const keys = new BigUint64Array(count);
  const words = new Uint32Array(keys.buffer);
  for (let i = 0; i < count; i++) {
    const name = names[i]!;
    let value = 0;
    for (let k = 0; k < width; k++) {
      const at = common + k;
      value = value * charScale + (at < name.length ? rankOf[name.charCodeAt(at)]! : 0);
    }
    value *= padScale;
    const high = Math.floor(value / lowNameScale);
    words[2 * i + HIGH_WORD] = ((place[i]! << (32 - PLACE_BITS)) | high) >>> 0;
    words[2 * i + 1 - HIGH_WORD] = (value - high * lowNameScale) * rowScale + i;
  }
  keys.sort();

  const out = new Array<SubjectScore>(count);
  const rowMask = rowScale - 1;
  for (let i = 0; i < count; ) {
    const high = words[2 * i + HIGH_WORD]!;
    const low = Math.floor(words[2 * i + 1 - HIGH_WORD]! / rowScale);
    let j = i + 1;
    while (j < count && words[2 * j + HIGH_WORD] === high && Math.floor(words[2 * j + 1 - HIGH_WORD]! / rowScale) === low) j++;
    if (j - i === 1) {
      out[i] = scores[words[2 * i + 1 - HIGH_WORD]! & rowMask]!;
      i++;
    } else {
      const tied: number[] = [];
      for (let k = i; k < j; k++) tied.push(words[2 * k + 1 - HIGH_WORD]! & rowMask);
      tied.sort(byName);
      for (let k = 0; k < tied.length; k++) out[i++] = scores[tied[k]!]!;
    }
  }
  return out;
}

/** Stable counting sort of `rows` by `key[row]` ∈ [0, buckets); `starts` (length buckets + 1) receives the bounds. */
function countingSort(rows: Int32Array, key: Int32Array, buckets: number, starts: Int32Array = new Int32Array(buckets + 1)): Int32Array {
  const n = rows.length;
  for (let i = 0; i < n; i++) starts[key[rows[i]!]! + 1]!++;
  for (let b = 0; b < buckets; b++) starts[b + 1]! += starts[b]!;
  const next = starts.slice(0, buckets);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const row = rows[i]!;
    out[next[key[row]!]!++] = row;
  }
  return out;
}

/**
 * Report parts that subjects have alike, shared (frozen) instead of made again: a registry's subjects repeat the same
 * few values, samples and instants (neighbours in a run share its times), and every part a report of 190,000 subjects
 * makes survives, for the GC to copy. A part is described by up to `width` numbers in `key`; the last part kept for
 * each hash of them (a direct-mapped cache of 4,096 parts) is found again when `key` holds the same numbers, NaN
 * matching NaN. What a key leaves out must follow from it (the same numbers, the same part, byte for byte).
 */
class PartCache<T extends object> {
  readonly key: Float64Array;
  private readonly keys: Float64Array;
  private readonly parts: Array<T | undefined>;
  private slot = 0;

  constructor(private readonly width: number) {
    this.key = new Float64Array(width);
    this.keys = new Float64Array(width << PART_SLOT_BITS);
    this.parts = new Array<T | undefined>(1 << PART_SLOT_BITS).fill(undefined);
  }

  /** The part kept for the numbers in `key`, or undefined: then `keep` the part made for them. */
  find(): T | undefined {
    const { key, keys, width } = this;
    let hash = 0;
    for (let i = 0; i < width; i++) {
      const v = key[i]!;
      hash = Math.imul(hash ^ (v | 0) ^ ((v * 100) | 0), 0x9e3779b1);
    }
    const slot = (this.slot = hash >>> (32 - PART_SLOT_BITS));
    const part = this.parts[slot];
    if (part === undefined) return undefined;
    const base = slot * width;
    for (let i = 0; i < width; i++) {
      const a = keys[base + i]!;
      const b = key[i]!;
      if (a !== b && (a === a || b === b)) return undefined;
    }
    return part;
  }

  /** Keeps `part` (frozen) for the numbers in `key`, as of the last `find`. */
  keep(part: T): T {
    Object.freeze(part);
    this.keys.set(this.key, this.slot * this.width);
    this.parts[this.slot] = part;
    return part;
  }
}

const PART_SLOT_BITS = 12;

/** Statuses HCS-25 counts as unavailable (a non-scorable component with one is omitted), by status code. */
const UNAVAILABLE_CODE = new Uint8Array(SIGNAL_STATUSES.length);
for (const status of ['missing', 'timeout', 'error'] as const) UNAVAILABLE_CODE[STATUS_CODES[status]] = 1;

/**
 * Scores one subject at a time from a SignalTable; its scratch space is reused from subject to subject. The HCS-25
 * aggregation (aggregate.ts `aggregateValidated`) is done here over the compiled config's layout, in the same order
 * and with the same arithmetic, straight into the breakdown: one object per part of the output and no intermediate
 * lists, as this runs once per subject of a registry. The property test against the reference keeps the two equal.
 */
class SubjectScorer {
  /** For each signal rank: the subject last seen with it, and that subject's range of positions in `order`. */
  private readonly groupOwner: Int32Array;
  private readonly groupFrom: Int32Array;
  private readonly groupTo: Int32Array;
  private readonly runOwner: Int32Array;
  private readonly payerOwner: Int32Array;
  private latencies = new Float64Array(64);
  private readonly latencyRank: number;
  private readonly flat: readonly CompiledComponent[];
  /** The config's components flattened in adapter order: adapter a's are [componentStart[a], componentStart[a + 1]). */
  private readonly componentStart: Int32Array;
  private readonly componentSignalRank: Int32Array;
  /** Rank of each component's key, and of each adapter's default key, in compiled.componentKeys. */
  private readonly componentKeyRank: Int32Array;
  private readonly defaultKeyRank: Int32Array;
  /** One subject's computed components (mean value, status code, samples, newest observation or NaN). */
  private readonly value: Float64Array;
  private readonly status: Uint8Array;
  private readonly samples: Int32Array;
  private readonly newest: Float64Array;
  /** One subject's adapters: applicable, emitted any component, total (NaN: none). */
  private readonly applicable: Uint8Array;
  private readonly emitted: Uint8Array;
  private readonly total: Float64Array;
  /** Component values as the aggregation writes them, by key rank (a later write wins, as in its record). */
  private readonly written: Float64Array;
  /** One subject's breakdown by component key rank (compiled.componentKeys). */
  private readonly components: Array<ComponentBreakdown | undefined>;
  private readonly routing: { id: string; registry?: string; protocol?: string } = { id: '' };
  /** `routing` and `applicable` hold the previous subject's. */
  private routed = false;
  /** One subject's adapter confidences, rounded (NaN: none). */
  private readonly confidence: Float64Array;
  /**
   * Parts of a report that many subjects have alike, made once and shared (frozen): trustScores by adapter totals,
   * the adapter breakdowns by those and the confidences, bySignal by counts. Totals and confidences are cents and
   * counts small integers, so each is keyed by one exact number; a config or topic out of those bounds (more than
   * three adapters or four signal ids) builds them per subject. Fewer objects per subject is less for the GC to copy.
   */
  private readonly trustScoresByTotals = new Map<number, { id: number; trustScores: SubjectScore['trustScores'] }>();
  private readonly adaptersByKey = new Map<number, AdapterBreakdown[]>();
  private readonly bySignalByCounts = new Map<number, Readonly<Record<string, number>>>();
  /** Component breakdowns, latency summaries and counts alike from subject to subject, made once (see PartCache). */
  private readonly sharedBreakdowns = new PartCache<ComponentBreakdown>(7);
  private readonly sharedLatency = new PartCache<LatencySummary>(3);
  private readonly sharedCounts = new PartCache<SubjectScore['counts']>(5);
  /** Each adapter's synthesized default component, once made. */
  private readonly synthesized: Array<ComponentBreakdown | undefined> = [];

  constructor(
    private readonly t: SignalTable,
    private readonly compiled: CompiledScoringConfig,
    private readonly nowMs: number,
    private readonly nowIso: string,
  ) {
    const ranks = t.signalIds.length;
    this.groupOwner = new Int32Array(ranks).fill(-1);
    this.groupFrom = new Int32Array(ranks);
    this.groupTo = new Int32Array(ranks);
    this.runOwner = new Int32Array(t.runs).fill(-1);
    this.payerOwner = new Int32Array(t.payers).fill(-1);
    const rankOf = new Map(t.signalIds.map((id, rank) => [id, rank]));
    this.latencyRank = rankOf.get(compiled.latencySignal) ?? -1;
    const keyRank = new Map(compiled.componentKeys.map((key, rank) => [key, rank]));
    const flat = (this.flat = compiled.adapters.flatMap((a) => a.components));
    const adapters = compiled.adapters.length;
    this.componentStart = new Int32Array(adapters + 1);
    compiled.adapters.forEach((a, i) => (this.componentStart[i + 1] = this.componentStart[i]! + a.components.length));
    this.componentSignalRank = Int32Array.from(flat, (c) => rankOf.get(c.signal) ?? -1);
    this.componentKeyRank = Int32Array.from(flat, (c) => keyRank.get(c.key)!);
    this.defaultKeyRank = Int32Array.from(compiled.adapters, (a) => keyRank.get(a.defaultKey)!);
    this.value = new Float64Array(flat.length);
    this.status = new Uint8Array(flat.length);
    this.samples = new Int32Array(flat.length);
    this.newest = new Float64Array(flat.length);
    this.applicable = new Uint8Array(adapters);
    this.emitted = new Uint8Array(adapters);
    this.total = new Float64Array(adapters);
    this.confidence = new Float64Array(adapters);
    this.written = new Float64Array(compiled.componentKeys.length);
    this.components = new Array<ComponentBreakdown | undefined>(compiled.componentKeys.length).fill(undefined);
  }

  score(index: number, uaid: UaidRouting): SubjectScore {
    const { t, compiled } = this;
    const { config } = compiled;
    const from = t.subjectStart[index]!;
    const to = t.subjectStart[index + 1]!;
    let countsKey = 0;
    for (let i = from; i < to; ) {
      const rank = t.signal[t.order[i]!]!;
      let j = i + 1;
      while (j < to && t.signal[t.order[j]!] === rank) j++;
      this.groupOwner[rank] = index;
      this.groupFrom[rank] = i;
      this.groupTo[rank] = j;
      countsKey += (j - i) * 4096 ** rank;
      i = j;
    }

    // The aggregation (aggregateValidated): every adapter's total, and the component values it writes.
    // Subjects of a registry mostly share registry and protocol: applicability is decided once per change of them.
    const routing = this.routing;
    // (The previous strings are kept then, so subjects share them.)
    const sameRouting = this.routed && uaid.registry === routing.registry && uaid.proto === routing.protocol;
    if (!sameRouting) {
      routing.registry = uaid.registry;
      routing.protocol = uaid.proto;
      this.routed = true;
    }
    const staleMultiplier = config.staleMultiplier;
    let denominatorWeight = 0;
    let denominatorSum = 0;
    const adapterCount = compiled.adapters.length;
    for (let a = 0; a < adapterCount; a++) {
      const { config: adapter } = compiled.adapters[a]!;
      const first = this.componentStart[a]!;
      const end = this.componentStart[a + 1]!;
      let any = false;
      for (let k = first; k < end; k++) if (this.component(k, index)) any = true;
      // HCS-25 TV2: an adapter without any data returns no component map; once it has some, a component without data
      // is `missing` and scores 0 inside it (TV1).
      this.emitted[a] = any ? 1 : 0;
      this.total[a] = Number.NaN;
      const applicable = sameRouting ? this.applicable[a] === 1 : isApplicable(adapter, routing);
      this.applicable[a] = applicable ? 1 : 0;
      if (!applicable) continue;
      let sum = 0;
      let kept = 0;
      if (any) {
        for (let k = first; k < end; k++) {
          const status = this.status[k]!;
          if (UNAVAILABLE_CODE[status] && this.flat[k]!.nonScorable) continue;
          const value = componentValue(this.value[k]!, SIGNAL_STATUSES[status]!, staleMultiplier);
          this.written[this.componentKeyRank[k]!] = value;
          sum += value;
          kept++;
        }
      }
      if (kept === 0) {
        if ((adapter.contributionMode ?? 'conditional') === 'conditional') continue;
        this.written[this.defaultKeyRank[a]!] = 0;
        kept = 1;
      }
      const total = round2(sum / kept);
      this.total[a] = total;
      const weight = adapter.weight ?? 1;
      // Weight 0 is informational: its total is shown but it stays out of the denominator.
      if (weight > 0) {
        denominatorWeight += weight;
        denominatorSum += total * weight;
      }
    }
    const composite = denominatorWeight === 0 ? 0 : round2(Math.min(100, Math.max(0, denominatorSum / denominatorWeight)));

    // The breakdown, by key rank so the record is built in code-unit order without sorting its keys per subject.
    const components = this.components;
    let weighted = 0;
    let weightSum = 0;
    for (let a = 0; a < adapterCount; a++) {
      const { config: adapter } = compiled.adapters[a]!;
      const adapterId = adapter.adapterId;
      const total = this.total[a]!;
      const defined = total === total;
      let confidence: number | null = null;
      if (defined) {
        const first = this.componentStart[a]!;
        const end = this.componentStart[a + 1]!;
        let allOmitted = true;
        confidence = 0;
        if (this.emitted[a]) {
          const { fullAtSamples, staleFactor } = config.confidence;
          for (let k = first; k < end; k++) {
            const code = this.status[k]!;
            const status = SIGNAL_STATUSES[code]!;
            const samples = this.samples[k]!;
            const keyRank = this.componentKeyRank[k]!;
            const omitted = UNAVAILABLE_CODE[code] === 1 && this.flat[k]!.nonScorable;
            if (!omitted) allOmitted = false;
            const value = omitted ? 0 : this.written[keyRank]!;
            const beforeStale = !omitted && code === STALE ? round2(this.value[k]!) : Number.NaN;
            const key = this.sharedBreakdowns.key;
            key[0] = keyRank;
            key[1] = a;
            key[2] = omitted ? 64 + code : code;
            key[3] = samples;
            key[4] = value;
            key[5] = this.newest[k]!;
            key[6] = beforeStale;
            let breakdown = this.sharedBreakdowns.find();
            if (breakdown === undefined) {
              const newestAt = samples > 0 ? new Date(this.newest[k]!).toISOString() : null;
              breakdown = this.sharedBreakdowns.keep(
                omitted
                  ? { adapterId, value: 0, status, samples, newestAt, omitted: true }
                  : code === STALE
                    ? { adapterId, value, status, samples, newestAt, beforeStale }
                    : { adapterId, value, status, samples, newestAt },
              );
            }
            components[keyRank] = breakdown;
            // c(a) (HCS-25 Confidence, the recommended form): mean over the adapter's components of
            // status factor (ok 1, stale `staleFactor`, missing/timeout/error 0) × min(1, samples / fullAtSamples).
            const statusFactor = code === OK ? 1 : code === STALE ? staleFactor : 0;
            confidence += statusFactor * Math.min(1, samples / fullAtSamples);
          }
          confidence /= end - first;
        }
        if (allOmitted) {
          // The adapter had to participate without output: HCS-25 synthesized its default component (0, missing).
          components[this.defaultKeyRank[a]!] = this.synthesized[a] ??= Object.freeze({ adapterId, value: 0, status: 'missing', samples: 0, newestAt: null, synthesized: true });
        }
      }
      const weight = adapter.weight ?? 1;
      const inDenominator = defined && weight > 0;
      if (inDenominator) {
        weighted += weight * confidence!;
        weightSum += weight;
      }
      this.confidence[a] = confidence === null ? Number.NaN : round2(confidence);
    }
    const shared = this.scoresAndAdapters(composite);

    return {
      subject: t.subjects[index]!,
      registry: routing.registry ?? null,
      protocol: routing.protocol ?? null,
      nativeId: uaid.nativeId ?? null,
      trustScores: shared.trustScores,
      trustConfidence: weightSum === 0 ? 0 : round2(weighted / weightSum),
      trustScoreConfigVersion: config.trustScoreConfigVersion,
      trustScoreConfigDigest: compiled.digest,
      staleMultiplier: config.staleMultiplier,
      trustScoreUpdatedAt: this.nowIso,
      adapters: shared.adapters,
      components: this.takeComponents(),
      latency: this.latency(index),
      counts: this.counts(index, from, to, countsKey),
    };
  }

  /** trustScores and the adapter breakdowns from `total`, `applicable` and `confidence`, shared when they can be. */
  private scoresAndAdapters(composite: number): { trustScores: SubjectScore['trustScores']; adapters: AdapterBreakdown[] } {
    const count = this.compiled.adapters.length;
    let totalsKey = 0;
    let adaptersKey = 0;
    let shareable = count <= 3;
    for (let a = 0; a < count && shareable; a++) {
      const total = this.total[a]!;
      const confidence = this.confidence[a]!;
      const totalCents = total === total ? Math.round(total * 100) : 10_001;
      const confidenceCents = confidence === confidence ? Math.round(confidence * 100) : 101;
      shareable = totalCents >= 0 && totalCents <= 10_001 && confidenceCents >= 0 && confidenceCents <= 101;
      totalsKey = totalsKey * 10_002 + totalCents;
      adaptersKey = adaptersKey * 204 + confidenceCents * 2 + this.applicable[a]!;
    }
    if (!shareable) return { trustScores: this.trustScores(composite), adapters: this.adapters() };
    let scores = this.trustScoresByTotals.get(totalsKey);
    if (scores === undefined) {
      scores = { id: this.trustScoresByTotals.size, trustScores: Object.freeze(this.trustScores(composite)) };
      this.trustScoresByTotals.set(totalsKey, scores);
    }
    adaptersKey += scores.id * 204 ** 3;
    let adapters = this.adaptersByKey.get(adaptersKey);
    if (adapters === undefined) {
      adapters = Object.freeze(this.adapters().map((a) => Object.freeze(a))) as AdapterBreakdown[];
      this.adaptersByKey.set(adaptersKey, adapters);
    }
    return { trustScores: scores.trustScores, adapters };
  }

  private trustScores(composite: number): SubjectScore['trustScores'] {
    const trustScores: SubjectScore['trustScores'] = { total: composite };
    for (let a = 0; a < this.compiled.adapters.length; a++) {
      const total = this.total[a]!;
      if (total === total) trustScores[this.compiled.adapters[a]!.config.adapterId] = total;
    }
    return trustScores;
  }

  private adapters(): AdapterBreakdown[] {
    return this.compiled.adapters.map(({ config: adapter }, a) => {
      const total = this.total[a]!;
      const confidence = this.confidence[a]!;
      return {
        adapterId: adapter.adapterId,
        contributionMode: adapter.contributionMode,
        weight: adapter.weight,
        applicable: this.applicable[a] === 1,
        inDenominator: total === total && (adapter.weight ?? 1) > 0,
        total: total === total ? total : null,
        confidence: confidence === confidence ? confidence : null,
      };
    });
  }

  /** Whether a subject's counts by signal id fit one number (count × 4096^rank), by which they are shared. */
  private countsShareable(from: number, to: number): boolean {
    return this.t.signalIds.length <= 4 && to - from < 4096;
  }

  /** Signals by catalog id (code-unit order), shared by counts (`key`: count × 4096^rank) when they fit the key. */
  private bySignal(subject: number, from: number, to: number, key: number): Record<string, number> {
    const shareable = this.countsShareable(from, to);
    if (shareable) {
      const known = this.bySignalByCounts.get(key);
      if (known !== undefined) return known;
    }
    const bySignal: Record<string, number> = {};
    for (let rank = 0; rank < this.t.signalIds.length; rank++) {
      const [first, end] = this.group(rank, subject);
      if (end > first) bySignal[this.t.signalIds[rank]!] = end - first;
    }
    if (shareable) this.bySignalByCounts.set(key, Object.freeze(bySignal));
    return bySignal;
  }

  /** The breakdown in `components` as a record in key order; `components` is left empty for the next subject. */
  private takeComponents(): Record<string, ComponentBreakdown> {
    const out: Record<string, ComponentBreakdown> = {};
    const keys = this.compiled.componentKeys;
    for (let k = 0; k < keys.length; k++) {
      const c = this.components[k];
      if (c === undefined) continue;
      out[keys[k]!] = c;
      this.components[k] = undefined;
    }
    return out;
  }

  /** Positions [from, to) in `order` of this subject's signals with that rank (empty when it has none). */
  private group(rank: number, subject: number): [number, number] {
    return rank >= 0 && this.groupOwner[rank] === subject ? [this.groupFrom[rank]!, this.groupTo[rank]!] : [0, 0];
  }

  /**
   * The window over a group: `latest` keeps its last `count` positions, `time` keeps positions observed at or after
   * the returned instant (NaN when every position counts).
   */
  private window(from: number, to: number, window: WindowConfig): [number, number] {
    if (window.kind === 'latest') return [Math.max(from, to - window.count), Number.NaN];
    let newest = Number.NEGATIVE_INFINITY;
    for (let i = from; i < to; i++) {
      const observed = this.t.observedMs[this.t.order[i]!]!;
      if (observed > newest) newest = observed;
    }
    return [from, newest - window.seconds * 1000];
  }

  /** Component k (flattened) of this subject into the scratch columns; true when it has samples. */
  private component(k: number, subject: number): boolean {
    const { t } = this;
    const c = this.flat[k]!;
    const [groupFrom, to] = this.group(this.componentSignalRank[k]!, subject);
    const [from, since] = this.window(groupFrom, to, c.window);
    const timed = c.window.kind === 'time';
    let samples = 0;
    let sum = 0;
    let anyOk = false;
    let newest = -1;
    for (let i = from; i < to; i++) {
      const row = t.order[i]!;
      if (timed && !(t.observedMs[row]! >= since)) continue;
      const status = t.status[row]!;
      if (status === MISSING) continue;
      samples++;
      if (status === OK || status === STALE) {
        sum += t.score[row]!;
        anyOk = true;
      }
      if (newest < 0) newest = row;
      else {
        const observed = t.observedMs[row]!;
        const newestObserved = t.observedMs[newest]!;
        if (observed > newestObserved || (observed === newestObserved && t.seq[row]! > t.seq[newest]!)) newest = row;
      }
    }
    this.samples[k] = samples;
    if (samples === 0) {
      this.value[k] = 0;
      this.status[k] = MISSING;
      this.newest[k] = Number.NaN;
      return false;
    }
    // ok when anything was measured (a failed probe or a wrong answer is a measured 0); timeout/error/missing only when
    // nothing was, and then they still score 0 here (HCS-25 Missing Data), unless the component is non-scorable.
    const newestObserved = t.observedMs[newest]!;
    let status = anyOk ? OK : t.status[newest]!;
    if (status === OK && this.nowMs - newestObserved > this.compiled.config.freshnessSeconds * 1000) status = STALE;
    this.value[k] = sum / samples;
    this.status[k] = status;
    this.newest[k] = newestObserved;
    return true;
  }

  private latency(subject: number): LatencySummary | null {
    const { t } = this;
    const [groupFrom, to] = this.group(this.latencyRank, subject);
    const window = this.compiled.config.latency.window;
    const [from, since] = this.window(groupFrom, to, window);
    if (this.latencies.length < to - from) this.latencies = new Float64Array(to - from);
    let count = 0;
    for (let i = from; i < to; i++) {
      const row = t.order[i]!;
      if (window.kind === 'time' && !(t.observedMs[row]! >= since)) continue;
      if (t.measured[row]) this.latencies[count++] = t.latencyMs[row]!;
    }
    if (count === 0) return null;
    // In place, by insertion: a window holds a few values, and a typed-array sort costs more than that to call.
    const values = this.latencies;
    for (let i = 1; i < count; i++) {
      const v = values[i]!;
      let j = i - 1;
      for (; j >= 0 && values[j]! > v; j--) values[j + 1] = values[j]!;
      values[j + 1] = v;
    }
    const p50Ms = percentile(values, 50, count);
    const p95Ms = percentile(values, 95, count);
    const key = this.sharedLatency.key;
    key[0] = p50Ms;
    key[1] = p95Ms;
    key[2] = count;
    return this.sharedLatency.find() ?? this.sharedLatency.keep({ p50Ms, p95Ms, samples: count });
  }

  /** `countsKey`: the counts by signal id as `bySignal` takes them. */
  private counts(subject: number, from: number, to: number, countsKey: number): SubjectScore['counts'] {
    const { t } = this;
    let runs = 0;
    let publishers = 0;
    let first = Number.POSITIVE_INFINITY;
    let last = Number.NEGATIVE_INFINITY;
    for (let i = from; i < to; i++) {
      const row = t.order[i]!;
      if (this.runOwner[t.run[row]!] !== subject) {
        this.runOwner[t.run[row]!] = subject;
        runs++;
      }
      if (this.payerOwner[t.payer[row]!] !== subject) {
        this.payerOwner[t.payer[row]!] = subject;
        publishers++;
      }
      const at = t.consensusMs[row]!;
      if (at < first) first = at;
      if (at > last) last = at;
    }
    const shareable = this.countsShareable(from, to);
    if (shareable) {
      const key = this.sharedCounts.key;
      key[0] = countsKey;
      key[1] = runs;
      key[2] = publishers;
      key[3] = first;
      key[4] = last;
      const known = this.sharedCounts.find();
      if (known !== undefined) return known;
    }
    const counts = { signals: to - from, bySignal: this.bySignal(subject, from, to, countsKey), runs, publishers, firstAt: new Date(first).toISOString(), lastAt: new Date(last).toISOString() };
    return shareable ? this.sharedCounts.keep(counts) : counts;
  }
}

/**
 * Nearest-rank percentile of ascending values (the first `length` of them): always one of the values, so integer ms
 * stay integers.
 */
export function percentile(sorted: ArrayLike<number>, p: number, length = sorted.length): number {
  if (length === 0) throw new RangeError('percentile of no values');
  const rank = Math.ceil((p / 100) * length);
  return sorted[Math.min(length, Math.max(1, rank)) - 1]!;
}

export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedRecord<V>(record: Readonly<Record<string, V>>): Record<string, V> {
  const out: Record<string, V> = {};
  for (const key of Object.keys(record).sort(byCodeUnit)) out[key] = record[key]!;
  return out;
}
