/**
 * The scoring as it was before the columnar rewrite (src/consumer/scores.ts at d652afc): one object per signal, a map
 * of lists per subject, the aggregation validated per subject. Kept only as the straightforward reference that the
 * property test in scores-reference.test.ts compares computeScores with; do not use it elsewhere.
 */
import { aggregateTrustScore, isApplicable, round2, type AdapterInput, type ComponentInput } from '../../src/consumer/aggregate.js';
import { scoringConfigDigest, type AdapterConfig, type ComponentConfig, type ScoringConfig, type WindowConfig } from '../../src/consumer/scoring-config.js';
import { displayName, subjectLabel } from '../../src/consumer/labels.js';
import { byCodeUnit, percentile, type AdapterBreakdown, type ComponentBreakdown, type LatencySummary, type ScoreOptions, type ScoreReport, type SubjectScore } from '../../src/consumer/scores.js';
import type { ReadSignal } from '../../src/consumer/types.js';
import { parseUaid } from '../../src/registry/uaid.js';
import type { SignalStatus } from '../../src/signals/protocol.js';
import { canonicalSignalId } from '../../src/signals/schema-v2.js';

const CONSENSUS = /^(\d{1,12})(?:\.(\d{1,9}))?$/;

function consensusMs(timestamp: string): number {
  const m = CONSENSUS.exec(timestamp);
  if (!m) return Number.NaN;
  return Number(m[1]) * 1000 + Math.floor(Number((m[2] ?? '0').padEnd(9, '0')) / 1_000_000);
}

/** One signal reduced to what scoring needs, with its observation time computed once. */
interface Observation {
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

type SubjectSignals = Map<string, Observation[]>;

export function referenceScores(signals: Iterable<ReadSignal>, config: ScoringConfig, options: ScoreOptions): ScoreReport {
  const nowMs = options.now.getTime();
  if (!Number.isFinite(nowMs)) throw new RangeError('computeScores: now is not a valid date');
  const { bySubject, scored, ignoredAfterNow } = group(signals, nowMs);

  const subjects: SubjectScore[] = [];
  const digest = scoringConfigDigest(config);
  for (const subject of [...bySubject.keys()].sort(byCodeUnit)) {
    const scored = scoreSubject(subject, bySubject.get(subject)!, config, options.now, digest);
    const given = options.labels?.[subject];
    const label = given === undefined ? undefined : displayName(given);
    subjects.push(label ? { ...scored, label } : scored);
  }
  // Ties: higher confidence first, then the name people see (label, else native id), then the UAID: a stable order.
  subjects.sort(
    (a, b) =>
      b.trustScores.total - a.trustScores.total ||
      b.trustConfidence - a.trustConfidence ||
      byCodeUnit(a.label ?? subjectLabel(a.subject), b.label ?? subjectLabel(b.subject)) ||
      byCodeUnit(a.subject, b.subject),
  );

  const accounts = [...new Set(options.publishers ?? [])].sort(byCodeUnit);
  return {
    generatedAt: options.now.toISOString(),
    trustScoreConfigVersion: config.trustScoreConfigVersion,
    topic: options.topic ?? null,
    publishers: { filter: accounts.length > 0 ? 'allow-list' : 'none', accounts },
    window: config.window,
    freshnessSeconds: config.freshnessSeconds,
    staleMultiplier: config.staleMultiplier,
    counts: { subjects: subjects.length, signals: scored, ignoredAfterNow, rejected: sortedRecord(options.rejected ?? {}) },
    subjects,
  };
}

/** Groups signals by subject and signal id, each list in sequence order; signals after `now` are left out. */
function group(signals: Iterable<ReadSignal>, nowMs: number): { bySubject: Map<string, SubjectSignals>; scored: number; ignoredAfterNow: number } {
  const bySubject = new Map<string, SubjectSignals>();
  let scored = 0;
  let ignoredAfterNow = 0;
  for (const s of signals) {
    const observation = observe(s);
    if (!(observation.consensusMs <= nowMs)) {
      ignoredAfterNow++;
      continue;
    }
    scored++;
    const { subject } = s.message;
    // v1 and v2 ids of one signal (simple-evals.math, simple-evals.a2a_math) are one series.
    const signal = canonicalSignalId(s.message.signal);
    let bySignal = bySubject.get(subject);
    if (!bySignal) bySubject.set(subject, (bySignal = new Map()));
    const list = bySignal.get(signal);
    if (list) list.push(observation);
    else bySignal.set(signal, [observation]);
  }
  for (const bySignal of bySubject.values()) {
    for (const list of bySignal.values()) {
      if (!isSortedBySeq(list)) list.sort((a, b) => a.seq - b.seq);
    }
  }
  return { bySubject, scored, ignoredAfterNow };
}

function observe(s: ReadSignal): Observation {
  const cMs = consensusMs(s.consensusTimestamp);
  const fetchedMs = Date.parse(s.message.fetchedAt);
  const data = s.message.data;
  // A failed probe is a measurement (status ok, score 0), as the reference maps it and v2 signals publish it;
  // v1 published it as timeout/error, which here would mean nothing was measured.
  const failedProbe = 'reachable' in data && !data.reachable && (s.message.status === 'timeout' || s.message.status === 'error');
  return {
    seq: s.sequenceNumber,
    observedMs: Math.min(cMs, fetchedMs),
    consensusMs: cMs,
    status: failedProbe ? 'ok' : s.message.status,
    score: data.score,
    latencyMs: data.latencyMs,
    measured: 'reachable' in data ? data.reachable : s.message.status === 'ok',
    run: s.message.run,
    payer: s.payerAccountId,
  };
}

function scoreSubject(subject: string, bySignal: SubjectSignals, config: ScoringConfig, now: Date, configDigest: string): SubjectScore {
  const nowMs = now.getTime();
  const uaid = parseUaid(subject);
  const subjectRef = {
    id: subject,
    ...(uaid.registry !== undefined ? { registry: uaid.registry } : {}),
    ...(uaid.proto !== undefined ? { protocol: uaid.proto } : {}),
  };

  const computedBy = new Map<string, ComputedComponent[]>();
  const adapterInputs: AdapterInput[] = [];
  for (const adapter of config.adapters) {
    const computed = adapter.components.map((c) => computeComponent(adapter.adapterId, c, bySignal.get(canonicalSignalId(c.signal)) ?? [], config, nowMs));
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
  let weighted = 0;
  let weightSum = 0;
  for (const adapter of config.adapters) {
    const applicable = isApplicable(adapter, subjectRef);
    const total = applicable ? result.trustScores[adapter.adapterId] : undefined;
    const emitted = computedBy.get(adapter.adapterId) ?? [];
    if (total !== undefined) {
      for (const { key, nonScorable: _, ...c } of emitted) {
        components[key] = omitted.has(key)
          ? { ...c, value: 0, omitted: true }
          : { ...c, value: result.components[key]!.value, ...(c.status === 'stale' ? { beforeStale: round2(c.value) } : {}) };
      }
      if (emitted.every((c) => omitted.has(c.key))) {
        // The adapter had to participate without output: HCS-25 synthesized its default component (0, missing).
        const key = adapter.defaultComponentKey ?? `${adapter.adapterId}.score`;
        components[key] = { adapterId: adapter.adapterId, value: 0, status: 'missing', samples: 0, newestAt: null, synthesized: true };
      }
    }
    const confidence = total === undefined ? null : adapterConfidence(emitted, config);
    const d = inDenominator.get(adapter.adapterId);
    if (d && confidence !== null) {
      weighted += d.weight * confidence;
      weightSum += d.weight;
    }
    adapters.push({
      adapterId: adapter.adapterId,
      contributionMode: adapter.contributionMode,
      weight: adapter.weight,
      applicable,
      inDenominator: d !== undefined,
      total: total ?? null,
      confidence: confidence === null ? null : round2(confidence),
    });
  }

  return {
    subject,
    registry: uaid.registry ?? null,
    protocol: uaid.proto ?? null,
    nativeId: uaid.nativeId ?? null,
    trustScores: result.trustScores,
    trustConfidence: weightSum === 0 ? 0 : round2(weighted / weightSum),
    trustScoreConfigVersion: result.trustScoreConfigVersion,
    trustScoreConfigDigest: configDigest,
    staleMultiplier: config.staleMultiplier,
    trustScoreUpdatedAt: result.trustScoreUpdatedAt,
    adapters,
    components: sortedRecord(components),
    latency: latency(bySignal.get(canonicalSignalId(config.latency.signal)) ?? [], config.latency.window),
    counts: subjectCounts(bySignal),
  };
}

type ComputedComponent = ComponentBreakdown & { key: string; nonScorable: boolean };

function computeComponent(adapterId: string, c: ComponentConfig, all: Observation[], config: ScoringConfig, nowMs: number): ComputedComponent {
  const windowed = applyWindow(all, c.window ?? config.window);
  const informative = windowed.filter((o) => o.status !== 'missing');
  const base = { key: c.key, adapterId, nonScorable: c.nonScorableWhenUnavailable === true };
  if (informative.length === 0) return { ...base, value: 0, status: 'missing', samples: 0, newestAt: null };

  let sum = 0;
  let anyOk = false;
  let newest = informative[0]!;
  for (const o of informative) {
    const okLike = o.status === 'ok' || o.status === 'stale';
    if (okLike) {
      sum += o.score;
      anyOk = true;
    }
    if (o.observedMs > newest.observedMs || (o.observedMs === newest.observedMs && o.seq > newest.seq)) newest = o;
  }
  const value = sum / informative.length;
  // ok when anything was measured (a failed probe or a wrong answer is a measured 0); timeout/error/missing only when
  // nothing was, and then they still score 0 here (HCS-25 Missing Data), unless the component is non-scorable.
  let status: SignalStatus = anyOk ? 'ok' : newest.status;
  if (status === 'ok' && nowMs - newest.observedMs > config.freshnessSeconds * 1000) status = 'stale';
  return { ...base, value, status, samples: informative.length, newestAt: new Date(newest.observedMs).toISOString() };
}

function toAdapterInput(adapter: AdapterConfig, emitted: ComputedComponent[]): AdapterInput {
  const components: ComponentInput[] = emitted.map((c) => ({ key: c.key, value: c.value, status: c.status, nonScorable: c.nonScorable }));
  return {
    adapterId: adapter.adapterId,
    contributionMode: adapter.contributionMode,
    weight: adapter.weight,
    ...(adapter.includeRegistries ? { includeRegistries: adapter.includeRegistries } : {}),
    ...(adapter.excludeRegistries ? { excludeRegistries: adapter.excludeRegistries } : {}),
    ...(adapter.protocols ? { protocols: adapter.protocols } : {}),
    ...(adapter.excludeProtocols ? { excludeProtocols: adapter.excludeProtocols } : {}),
    ...(adapter.defaultComponentKey ? { defaultComponentKey: adapter.defaultComponentKey } : {}),
    components,
  };
}

/**
 * c(a) (HCS-25 Confidence, the recommended form): mean over the adapter's components of
 * status factor (ok 1, stale `staleFactor`, missing/timeout/error 0) × min(1, samples / fullAtSamples).
 * An adapter that only has its synthesized default component has confidence 0.
 */
function adapterConfidence(emitted: ComponentBreakdown[], config: ScoringConfig): number {
  if (emitted.length === 0) return 0;
  const { fullAtSamples, staleFactor } = config.confidence;
  let sum = 0;
  for (const c of emitted) {
    const statusFactor = c.status === 'ok' ? 1 : c.status === 'stale' ? staleFactor : 0;
    sum += statusFactor * Math.min(1, c.samples / fullAtSamples);
  }
  return sum / emitted.length;
}

function applyWindow<T extends { observedMs: number }>(list: T[], window: WindowConfig): T[] {
  if (window.kind === 'latest') return list.length <= window.count ? list : list.slice(list.length - window.count);
  let newest = Number.NEGATIVE_INFINITY;
  for (const o of list) if (o.observedMs > newest) newest = o.observedMs;
  const from = newest - window.seconds * 1000;
  return list.filter((o) => o.observedMs >= from);
}

function latency(list: Observation[], window: WindowConfig): LatencySummary | null {
  const values = applyWindow(list, window)
    .filter((o) => o.measured)
    .map((o) => o.latencyMs)
    .sort((a, b) => a - b);
  if (values.length === 0) return null;
  return { p50Ms: percentile(values, 50), p95Ms: percentile(values, 95), samples: values.length };
}

function subjectCounts(bySignal: SubjectSignals): SubjectScore['counts'] {
  const runs = new Set<string>();
  const payers = new Set<string>();
  const bySignalCount: Record<string, number> = {};
  let signals = 0;
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const id of [...bySignal.keys()].sort(byCodeUnit)) {
    const list = bySignal.get(id)!;
    bySignalCount[id] = list.length;
    signals += list.length;
    for (const o of list) {
      runs.add(o.run);
      payers.add(o.payer);
      if (o.consensusMs < first) first = o.consensusMs;
      if (o.consensusMs > last) last = o.consensusMs;
    }
  }
  return {
    signals,
    bySignal: bySignalCount,
    runs: runs.size,
    publishers: payers.size,
    firstAt: new Date(first).toISOString(),
    lastAt: new Date(last).toISOString(),
  };
}

function isSortedBySeq(list: Observation[]): boolean {
  for (let i = 1; i < list.length; i++) if (list[i]!.seq < list[i - 1]!.seq) return false;
  return true;
}

function sortedRecord<V>(record: Readonly<Record<string, V>>): Record<string, V> {
  const out: Record<string, V> = {};
  for (const key of Object.keys(record).sort(byCodeUnit)) out[key] = record[key]!;
  return out;
}
