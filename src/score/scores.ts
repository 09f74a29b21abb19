/**
 * Signals → per-subject HCS-25 components → the HCS-25 aggregation (aggregate.ts) → an explainable breakdown.
 *
 * Deterministic: the same signals (in any order), config and `now` give byte-identical JSON. Signals are ordered by
 * sequence number, subjects by score, ties by eval observations, then confidence, then name, then subject id
 * (code-unit order, never locale order), and every number that leaves here is rounded.
 *
 * Over 500 lines: the fold, the per-subject scoring and its breakdown share private types (Observation,
 * ComputedComponent) that no other module needs.
 */
import { aggregateTrustScore, isApplicable, round2, validateAggregation, type AdapterInput } from './aggregate.js';
import {
  scoringConfigDigest,
  type AdapterConfig,
  type ComponentConfig,
  type ScoringConfig,
  type WindowConfig,
} from './scoring-config.js';
import { applyWindow, latency, type LatencySummary } from './window.js';
import { byEvidence, evidenceStrength, type EvidenceStrength } from './evidence.js';
import { displayName, uaidLabel } from '../read/labels.js';
import { consensusMs } from '../core/consensus-time.js';
import type { ReadSignal } from '../read/types.js';
import { parseUaid } from '../discover/uaid.js';
import type { SignalStatus } from '../format/protocol.js';
import type { SignalMessage } from '../format/schema-v1.js';
import { canonicalSignalId, type SignalMessageV2 } from '../format/schema-v2.js';

export interface ScoreOptions {
  /** The instant scores are computed for: freshness is measured against it, later signals are ignored. */
  now: Date;
  /** The publisher allow-list the signals were filtered by; empty or absent means any publisher was accepted. */
  publishers?: readonly string[];
  /** Signal topic, shown in reports. */
  topic?: string;
  /** Counts of rejected messages by reason, from the reader, shown in reports. */
  rejected?: Readonly<Record<string, number>>;
  /** What the reader did not know (versions, ops, signal ids, values, fields) counted by `kind:name`, shown in reports. */
  unknown?: Readonly<Record<string, number>>;
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
  /** The reference's c(a): share of the adapter's components with status `ok` (null when not applicable). */
  confidence: number | null;
}

export interface SubjectScore {
  subject: string;
  /** A display name the caller supplied (ScoreOptions.labels), if any. */
  label?: string;
  registry: string | null;
  protocol: string | null;
  nativeId: string | null;
  trustScores: { total: number; [adapterId: string]: number };
  /** The reference's trustConfidence (HCS-25's recommended form): share of `ok` components, weighted like the score. */
  trustConfidence: number;
  /** Ours, for reports only: also how many signals back each component (config `confidence`); never published. */
  sampleConfidence: number;
  /** What the score was computed from, for the published record's `evidence`: the distinct runs its components used. */
  evidence: { runs: string[] };
  trustScoreConfigVersion: number;
  /** Digest of the scoring config used (scoring-config.ts `scoringConfigDigest`), for the score explanation. */
  trustScoreConfigDigest: string;
  /** HCS-25 m_stale of that config. */
  staleMultiplier: number;
  trustScoreUpdatedAt: string;
  adapters: AdapterBreakdown[];
  components: Record<string, ComponentBreakdown>;
  /** Observations and 95% intervals per eval, and what the score rests on (evidence.ts). */
  evidenceStrength: EvidenceStrength;
  latency: LatencySummary | null;
  counts: {
    signals: number;
    bySignal: Record<string, number>;
    runs: number;
    publishers: number;
    firstAt: string;
    lastAt: string;
  };
}

export interface ScoreReport {
  generatedAt: string;
  /** Sequence numbers of the first and last signal read from the topic (null when none was): a score record cites it. */
  seq: [number, number] | null;
  trustScoreConfigVersion: number;
  topic: string | null;
  /** `none` means no allow-list: signals from any paying account were accepted (spoofable; say so to users). */
  publishers: { filter: 'allow-list' | 'none'; accounts: string[] };
  window: WindowConfig;
  freshnessSeconds: number;
  staleMultiplier: number;
  counts: {
    subjects: number;
    signals: number;
    ignoredAfterNow: number;
    rejected: Record<string, number>;
    unknown: Record<string, number>;
  };
  subjects: SubjectScore[];
}

/** What scoring keeps of one signal. */
interface Observation {
  /** The catalog id: v1 and v2 ids of one signal (simple-evals.math, simple-evals.a2a_math) are one series. */
  signal: string;
  seq: number;
  /** min(fetchedAt, consensus): see scoring-config.ts. */
  observedMs: number;
  consensusMs: number;
  status: SignalStatus;
  score: number;
  latencyMs: number;
  /** Probes: reachable. Evals: graded (status ok). */
  measured: boolean;
  run: string;
  payer: string;
}

/** Scores signals held in memory: {@link ScoreAccumulator} fed from an iterable. */
export function computeScores(
  signals: Iterable<ReadSignal>,
  config: ScoringConfig,
  options: ScoreOptions,
): ScoreReport {
  const scoring = new ScoreAccumulator(config, options.now);
  for (const s of signals) scoring.add(s);
  return scoring.finish(options);
}

/**
 * Scoring as a fold: `add` takes signals one at a time, as the reader yields them, and keeps only what scoring needs
 * of each (an Observation, grouped by subject and signal id); `finish` scores every subject. So `hcs25 scores` never
 * holds the signals themselves. Any order of signals gives the same report. One accumulator gives one report.
 */
export class ScoreAccumulator {
  private readonly nowMs: number;
  /** Each subject's observations, in the order they came. */
  private readonly subjects = new Map<string, Observation[]>();
  /** One copy of each run id, payer and signal id: many signals repeat a few, and each parsed message has its own. */
  private readonly strings = new Map<string, string>();
  private scored = 0;
  private ignoredAfterNow = 0;
  private firstSeq = Number.POSITIVE_INFINITY;
  private lastSeq = Number.NEGATIVE_INFINITY;
  private finished = false;

  constructor(
    private readonly config: ScoringConfig,
    private readonly now: Date,
  ) {
    this.nowMs = now.getTime();
    if (!Number.isFinite(this.nowMs)) throw new RangeError('computeScores: now is not a valid date');
    // A bad config fails here, before any signal is read.
    validateAggregation({
      trustScoreConfigVersion: config.trustScoreConfigVersion,
      staleMultiplier: config.staleMultiplier,
      adapters: config.adapters.map((adapter) => ({
        ...toAdapterInput(adapter, []),
        components: adapter.components.map((c) => ({ key: c.key, value: 0, status: 'ok' as const })),
      })),
    });
  }

  /** Signals taken so far (those after `now` are counted apart and not kept). */
  get size(): number {
    return this.scored;
  }

  add(s: ReadSignal): void {
    this.addSignal(s.message, s.sequenceNumber, s.consensusMs ?? consensusMs(s.consensusTimestamp), s.payerAccountId);
  }

  /**
   * `add` for a signal as the reader has it in hand (its validated message, and of its transaction the sequence number,
   * consensus time in ms and payer), so the reader can fold each message without building a ReadSignal.
   */
  addSignal(m: SignalMessage | SignalMessageV2, sequenceNumber: number, cMs: number, payerAccountId: string): void {
    // The range read, later signals included: a verifier re-reads exactly it and applies `now` as this did.
    if (sequenceNumber < this.firstSeq) this.firstSeq = sequenceNumber;
    if (sequenceNumber > this.lastSeq) this.lastSeq = sequenceNumber;
    if (!(cMs <= this.nowMs)) {
      this.ignoredAfterNow++;
      return;
    }
    this.scored++;
    const data = m.data;
    // A failed probe is a measurement (status ok, score 0), as the reference maps it and v2 signals publish it;
    // v1 published it as timeout/error, which here would mean nothing was measured.
    const failedProbe = 'reachable' in data && !data.reachable && (m.status === 'timeout' || m.status === 'error');
    const observation: Observation = {
      signal: this.shared(canonicalSignalId(m.signal)),
      seq: sequenceNumber,
      observedMs: Math.min(cMs, Date.parse(m.fetchedAt)),
      consensusMs: cMs,
      status: failedProbe ? 'ok' : m.status,
      score: data.score,
      latencyMs: data.latencyMs,
      measured: 'reachable' in data ? data.reachable : m.status === 'ok',
      run: this.shared(m.run),
      payer: this.shared(payerAccountId),
    };
    const list = this.subjects.get(m.subject);
    if (list) list.push(observation);
    else this.subjects.set(m.subject, [observation]);
  }

  private shared(text: string): string {
    const known = this.strings.get(text);
    if (known !== undefined) return known;
    this.strings.set(text, text);
    return text;
  }

  /** The report over every signal added. */
  finish(options: Omit<ScoreOptions, 'now'> = {}): ScoreReport {
    if (this.finished) throw new Error('ScoreAccumulator.finish: already finished');
    this.finished = true;
    const { config, now } = this;
    const digest = scoringConfigDigest(config);
    const ranked: Array<{ score: SubjectScore; name: string }> = [];
    const nowIso = now.toISOString();
    for (const [subject, observations] of this.subjects) {
      // A scored subject's observations go, so that they and the report are not all held at once.
      this.subjects.delete(subject);
      const uaid = parseUaid(subject);
      const scored = scoreSubject(subject, uaid, observations, config, now, nowIso, digest);
      const given = options.labels?.[subject];
      const label = given === undefined ? undefined : displayName(given);
      ranked.push({ score: label ? { ...scored, label } : scored, name: label ?? uaidLabel(uaid, subject) });
    }
    // Ties: more eval observations first (a thin or availability-only score after a well-evidenced one), higher
    // confidence, then the name people see (label, else native id), then the UAID: a total order.
    ranked.sort(
      (a, b) =>
        b.score.trustScores.total - a.score.trustScores.total ||
        byEvidence(a.score.evidenceStrength, b.score.evidenceStrength) ||
        b.score.trustConfidence - a.score.trustConfidence ||
        b.score.sampleConfidence - a.score.sampleConfidence ||
        byCodeUnit(a.name, b.name) ||
        byCodeUnit(a.score.subject, b.score.subject),
    );
    const subjects = ranked.map((r) => r.score);

    const accounts = [...new Set(options.publishers ?? [])].sort(byCodeUnit);
    return {
      generatedAt: nowIso,
      seq: this.scored + this.ignoredAfterNow > 0 ? [this.firstSeq, this.lastSeq] : null,
      trustScoreConfigVersion: config.trustScoreConfigVersion,
      topic: options.topic ?? null,
      publishers: { filter: accounts.length > 0 ? 'allow-list' : 'none', accounts },
      window: config.window,
      freshnessSeconds: config.freshnessSeconds,
      staleMultiplier: config.staleMultiplier,
      counts: {
        subjects: subjects.length,
        signals: this.scored,
        ignoredAfterNow: this.ignoredAfterNow,
        rejected: sortedRecord(options.rejected ?? {}),
        unknown: sortedRecord(options.unknown ?? {}),
      },
      subjects,
    };
  }
}

type ComputedComponent = ComponentBreakdown & { key: string; nonScorable: boolean; runs: ReadonlySet<string> };

function scoreSubject(
  subject: string,
  uaid: ReturnType<typeof parseUaid>,
  observations: Observation[],
  config: ScoringConfig,
  now: Date,
  nowIso: string,
  configDigest: string,
): SubjectScore {
  const nowMs = now.getTime();
  const subjectRef = {
    id: subject,
    ...(uaid.registry !== undefined ? { registry: uaid.registry } : {}),
    ...(uaid.proto !== undefined ? { protocol: uaid.proto } : {}),
  };
  // Each signal id's observations in sequence order (the sort is stable: one sequence number keeps arrival order).
  const bySignal = new Map<string, Observation[]>();
  for (const o of observations.sort((a, b) => a.seq - b.seq)) {
    const list = bySignal.get(o.signal);
    if (list) list.push(o);
    else bySignal.set(o.signal, [o]);
  }
  const series = (signal: string) => bySignal.get(canonicalSignalId(signal)) ?? [];

  const computedBy = new Map<string, ComputedComponent[]>();
  const adapterInputs: AdapterInput[] = [];
  for (const adapter of config.adapters) {
    const computed = adapter.components.map((c) =>
      computeComponent(adapter.adapterId, c, series(c.signal), config, nowMs),
    );
    // HCS-25 TV2: an adapter without any data returns no component map; once it has some, a component without data
    // is `missing` and scores 0 inside it (TV1).
    const emitted = computed.some((c) => c.samples > 0) ? computed : [];
    adapterInputs.push(toAdapterInput(adapter, emitted));
    computedBy.set(adapter.adapterId, emitted);
  }

  const result = aggregateTrustScore({
    subject: subjectRef,
    trustScoreConfigVersion: config.trustScoreConfigVersion,
    staleMultiplier: config.staleMultiplier,
    adapters: adapterInputs,
    now,
  });

  const omitted = new Set(result.unavailable);
  const inDenominator = new Map(result.denominator.map((d) => [d.adapterId, d]));
  const components: Record<string, ComponentBreakdown> = {};
  const adapters: AdapterBreakdown[] = [];
  const runs = new Set<string>();
  let weighted = 0;
  let weightSum = 0;
  for (const adapter of config.adapters) {
    const applicable = isApplicable(adapter, subjectRef);
    const total = applicable ? result.trustScores[adapter.adapterId] : undefined;
    const emitted = computedBy.get(adapter.adapterId) ?? [];
    if (total !== undefined) {
      for (const { key, nonScorable: _, runs: used, ...c } of emitted) {
        for (const run of used) runs.add(run);
        components[key] = omitted.has(key)
          ? { ...c, value: 0, omitted: true }
          : {
              ...c,
              value: result.components[key]!.value,
              ...(c.status === 'stale' ? { beforeStale: round2(c.value) } : {}),
            };
      }
      if (emitted.every((c) => omitted.has(c.key))) {
        // The adapter had to participate without output: HCS-25 synthesized its default component (0, missing).
        const key = adapter.defaultComponentKey ?? `${adapter.adapterId}.score`;
        components[key] = {
          adapterId: adapter.adapterId,
          value: 0,
          status: 'missing',
          samples: 0,
          newestAt: null,
          synthesized: true,
        };
      }
    }
    const samples = total === undefined ? null : sampleConfidence(emitted, config);
    const d = inDenominator.get(adapter.adapterId);
    if (d && samples !== null) {
      weighted += d.weight * samples;
      weightSum += d.weight;
    }
    // c(a) of an applicable adapter outside the denominator (weight 0, or conditional without output), as for one in it.
    const ok = emitted.filter((c) => c.status === 'ok' && !omitted.has(c.key)).length;
    const kept = emitted.filter((c) => !omitted.has(c.key)).length;
    adapters.push({
      adapterId: adapter.adapterId,
      contributionMode: adapter.contributionMode,
      weight: adapter.weight,
      applicable,
      inDenominator: d !== undefined,
      total: total ?? null,
      confidence: total === undefined ? null : (d?.confidence ?? (kept === 0 ? 0 : ok / kept)),
    });
  }

  return {
    subject,
    registry: uaid.registry ?? null,
    protocol: uaid.proto ?? null,
    nativeId: uaid.nativeId ?? null,
    trustScores: result.trustScores,
    trustConfidence: result.trustConfidence,
    sampleConfidence: weightSum === 0 ? 0 : round2(weighted / weightSum),
    evidence: { runs: [...runs].sort(byCodeUnit) },
    trustScoreConfigVersion: result.trustScoreConfigVersion,
    trustScoreConfigDigest: configDigest,
    staleMultiplier: config.staleMultiplier,
    trustScoreUpdatedAt: nowIso,
    adapters,
    components: sortedRecord(components),
    evidenceStrength: evidenceStrength(components, config),
    latency: latency(series(config.latency.signal), config.latency.window),
    counts: subjectCounts(observations, bySignal),
  };
}

function computeComponent(
  adapterId: string,
  c: ComponentConfig,
  all: Observation[],
  config: ScoringConfig,
  nowMs: number,
): ComputedComponent {
  const informative = applyWindow(all, c.window ?? config.window).filter((o) => o.status !== 'missing');
  const base = {
    key: c.key,
    adapterId,
    nonScorable: c.nonScorableWhenUnavailable === true,
    runs: new Set(informative.map((o) => o.run)),
  };
  if (informative.length === 0) return { ...base, value: 0, status: 'missing', samples: 0, newestAt: null };

  let sum = 0;
  let anyOk = false;
  let newest = informative[0]!;
  for (const o of informative) {
    if (o.status === 'ok' || o.status === 'stale') {
      sum += o.score;
      anyOk = true;
    }
    // Equally fresh observations: the later sequence number is the newer.
    if (o.observedMs > newest.observedMs || (o.observedMs === newest.observedMs && o.seq > newest.seq)) newest = o;
  }
  // ok when anything was measured (a failed probe or a wrong answer is a measured 0); timeout/error/missing only when
  // nothing was, and then they still score 0 here (HCS-25 Missing Data), unless the component is non-scorable.
  let status: SignalStatus = anyOk ? 'ok' : newest.status;
  if (status === 'ok' && nowMs - newest.observedMs > config.freshnessSeconds * 1000) status = 'stale';
  const newestAt = new Date(newest.observedMs).toISOString();
  return { ...base, value: sum / informative.length, status, samples: informative.length, newestAt };
}

function toAdapterInput(adapter: AdapterConfig, emitted: ComputedComponent[]): AdapterInput {
  return {
    adapterId: adapter.adapterId,
    contributionMode: adapter.contributionMode,
    weight: adapter.weight,
    ...(adapter.includeRegistries ? { includeRegistries: adapter.includeRegistries } : {}),
    ...(adapter.excludeRegistries ? { excludeRegistries: adapter.excludeRegistries } : {}),
    ...(adapter.protocols ? { protocols: adapter.protocols } : {}),
    ...(adapter.excludeProtocols ? { excludeProtocols: adapter.excludeProtocols } : {}),
    ...(adapter.defaultComponentKey ? { defaultComponentKey: adapter.defaultComponentKey } : {}),
    components: emitted.map((c) => ({ key: c.key, value: c.value, status: c.status, nonScorable: c.nonScorable })),
  };
}

/**
 * Our samples-based adapter confidence (reports only): mean over the adapter's components of
 * status factor (ok 1, stale `staleFactor`, missing/timeout/error 0) × min(1, samples / fullAtSamples).
 * An adapter that only has its synthesized default component has confidence 0.
 */
function sampleConfidence(emitted: ComponentBreakdown[], config: ScoringConfig): number {
  if (emitted.length === 0) return 0;
  const { fullAtSamples, staleFactor } = config.confidence;
  let sum = 0;
  for (const c of emitted) {
    const statusFactor = c.status === 'ok' ? 1 : c.status === 'stale' ? staleFactor : 0;
    sum += statusFactor * Math.min(1, c.samples / fullAtSamples);
  }
  return sum / emitted.length;
}

function subjectCounts(observations: Observation[], bySignal: Map<string, Observation[]>): SubjectScore['counts'] {
  const counts: Record<string, number> = {};
  for (const id of [...bySignal.keys()].sort(byCodeUnit)) counts[id] = bySignal.get(id)!.length;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const o of observations) {
    first = Math.min(first, o.consensusMs);
    last = Math.max(last, o.consensusMs);
  }
  return {
    signals: observations.length,
    bySignal: counts,
    runs: new Set(observations.map((o) => o.run)).size,
    publishers: new Set(observations.map((o) => o.payer)).size,
    firstAt: new Date(first).toISOString(),
    lastAt: new Date(last).toISOString(),
  };
}

export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortedRecord<V>(record: Readonly<Record<string, V>>): Record<string, V> {
  const out: Record<string, V> = {};
  for (const key of Object.keys(record).sort(byCodeUnit)) out[key] = record[key]!;
  return out;
}
