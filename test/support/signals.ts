/** Builders for validated signals, shaped exactly as the reader yields them. */
import type { ReadSignal } from '../../src/read/types.js';
import { consensusIso } from '../../src/core/consensus-time.js';
import { SIGNAL_IDS, signalMessageSchema, type SignalMessage } from '../../src/format/schema-v1.js';
import { SIGNAL_IDS_V2, signalMessageV2Schema, type SignalMessageV2 } from '../../src/format/schema-v2.js';
import type { FailureReason } from '../../src/format/reasons.js';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A valid, deterministic ULID for run number `i`. */
export function runId(i: number): string {
  let tail = '';
  let v = i;
  for (let k = 0; k < 6; k++) {
    tail = CROCKFORD[v % 32]! + tail;
    v = Math.floor(v / 32);
  }
  return `01JDX3V9W5Q8K6T2N4M7${tail}`;
}

export function uaid(nativeId: string, proto = 'a2a', registry = 'hol'): string {
  return `uaid:aid:2ayFqipw6krtLto6minZALXx9qyKUrr17pEPCqtMyHHCZFzMRvSCKh;uid=0;registry=${registry};proto=${proto};nativeId=${nativeId}`;
}

export const T0 = Date.parse('2026-11-21T10:00:00.000Z');
export const HOUR = 3_600_000;

interface Common {
  seq: number;
  /** Consensus time, ms. */
  at: number;
  /** fetchedAt, ms; defaults to 1 s before consensus. */
  fetched?: number;
  run?: number;
  payer?: string;
  /** Place in a packed message (0 for a single signal). */
  index?: number;
  /** Registry HRLs the subject came from. */
  sources?: string[];
}

function wrap(message: SignalMessage | SignalMessageV2, c: Common): ReadSignal {
  const ts = `${Math.floor(c.at / 1000)}.${String((c.at % 1000) * 1_000_000).padStart(9, '0')}`;
  return {
    sequenceNumber: c.seq,
    consensusTimestamp: ts,
    consensusAt: consensusIso(ts),
    payerAccountId: c.payer ?? '0.0.1001',
    index: c.index ?? 0,
    message:
      message.v === 2 ? (signalMessageV2Schema.parse(message) as SignalMessageV2) : signalMessageSchema.parse(message),
  };
}

function envelope(subject: string, c: Common) {
  return {
    p: 'hcs-25',
    op: 'signal',
    v: 1,
    subject,
    fetchedAt: new Date(c.fetched ?? c.at - 1000).toISOString(),
    run: runId(c.run ?? c.seq),
    ...(c.sources && { sources: c.sources }),
  } as const;
}

export function probe(
  subject: string,
  c: Common & { reachable?: boolean; latencyMs?: number; status?: 'ok' | 'timeout' | 'error' | 'missing' },
): ReadSignal {
  const reachable = c.reachable ?? true;
  return wrap(
    {
      ...envelope(subject, c),
      signal: SIGNAL_IDS.availability,
      status: c.status ?? (reachable ? 'ok' : 'timeout'),
      data: {
        reachable,
        latencyMs: c.latencyMs ?? 100,
        transport: 'a2a',
        score: reachable ? 100 : 0,
        ...(reachable ? { httpStatus: 200 } : { reason: 'timeout' }),
      },
    },
    c,
  );
}

type Outcome = 'correct' | 'wrong' | 'unparseable' | 'empty' | 'timeout' | 'error' | 'skipped';
const STATUS: Record<Outcome, 'ok' | 'timeout' | 'error' | 'missing'> = {
  correct: 'ok',
  wrong: 'ok',
  unparseable: 'ok',
  empty: 'ok',
  timeout: 'timeout',
  error: 'error',
  skipped: 'missing',
};

export function evalSignal(
  subject: string,
  kind: 'math' | 'science',
  outcome: Outcome,
  c: Common & { latencyMs?: number },
): ReadSignal {
  return wrap(
    {
      ...envelope(subject, c),
      signal: kind === 'math' ? SIGNAL_IDS.math : SIGNAL_IDS.science,
      status: STATUS[outcome],
      data: {
        outcome,
        score: outcome === 'correct' ? 100 : 0,
        questionHash: 'hs256:AAAAAAAAAAAAAAAAAAAAAA',
        answer: outcome === 'correct' || outcome === 'wrong' ? '42' : null,
        responseHash: null,
        compliant: outcome === 'correct',
        latencyMs: c.latencyMs ?? 500,
        grader: 'first-token@1',
        transport: 'a2a',
      },
    },
    c,
  );
}

/**
 * The HCS-25 test vectors as signals. The catalog has no reputation signal, so `reputation.stars = 40` comes from a
 * reputation adapter reading the latest 5 math evals (2 correct), while `simple-evals.math = 100` reads only the
 * latest one. Science has a single `skipped` eval (status missing), so `simple-evals.science` is missing → 0.
 * In TV2 the reputation adapter reads a signal id nobody published: no output, and being conditional it leaves the
 * denominator.
 */
export function vectorConfig(vector: 1 | 2) {
  return {
    trustScoreConfigVersion: 1,
    staleMultiplier: 1,
    freshnessSeconds: 86_400,
    window: { kind: 'latest', count: 10 },
    adapters: [
      {
        adapterId: 'availability',
        contributionMode: 'scoped',
        weight: 1,
        components: [{ key: 'availability.uptime', signal: 'availability.probe', method: 'reachable-share' }],
      },
      {
        adapterId: 'simple-evals',
        contributionMode: 'scoped',
        weight: 2,
        components: [
          {
            key: 'simple-evals.math',
            signal: 'simple-evals.math',
            method: 'mean-score',
            window: { kind: 'latest', count: 1 },
          },
          { key: 'simple-evals.science', signal: 'simple-evals.science', method: 'mean-score' },
        ],
      },
      {
        adapterId: 'reputation',
        contributionMode: vector === 1 ? 'scoped' : 'conditional',
        weight: 1,
        components: [
          {
            key: 'reputation.stars',
            signal: vector === 1 ? 'simple-evals.math' : 'reputation.stars',
            method: 'mean-score',
            window: { kind: 'latest', count: 5 },
          },
        ],
      },
    ],
  } as const;
}

/** Signals for one subject that produce the vectors' snapshot: uptime 90, math 100 (latest) / 40 (latest 5), science missing. */
export function vectorSignals(subject: string, firstSeq = 1, start = T0): ReadSignal[] {
  const out: ReadSignal[] = [];
  let seq = firstSeq;
  for (let i = 0; i < 10; i++)
    out.push(probe(subject, { seq: seq++, at: start + i * 60_000, run: i, reachable: i !== 3 }));
  const math: Outcome[] = ['wrong', 'correct', 'wrong', 'wrong', 'correct'];
  for (const [i, o] of math.entries())
    out.push(evalSignal(subject, 'math', o, { seq: seq++, at: start + (20 + i) * 60_000, run: i }));
  out.push(evalSignal(subject, 'science', 'skipped', { seq: seq++, at: start + 30 * 60_000, run: 0 }));
  return out;
}

/** A v2 signal (single or one of a pack, `index`), with its closed failure reason when it failed. */
export function signalV2(
  subject: string,
  kind: 'math' | 'science' | 'probe',
  outcome: 'correct' | 'wrong' | 'unparseable' | 'timeout' | 'error' | 'skipped' | 'reachable' | 'unreachable',
  c: Common & { reason?: FailureReason; latencyMs?: number },
): ReadSignal {
  const base = { ...envelope(subject, c), v: 2 as const };
  const reason = c.reason ? { reason: c.reason } : {};
  if (kind === 'probe') {
    const reachable = outcome === 'reachable';
    return wrap(
      {
        ...base,
        signal: SIGNAL_IDS_V2.availability,
        status: 'ok',
        data: { reachable, score: reachable ? 100 : 0, latencyMs: c.latencyMs ?? 100, transport: 'a2a', ...reason },
      },
      c,
    );
  }
  const status =
    outcome === 'timeout' ? 'timeout' : outcome === 'error' ? 'error' : outcome === 'skipped' ? 'missing' : 'ok';
  return wrap(
    {
      ...base,
      signal: kind === 'math' ? SIGNAL_IDS_V2.math : SIGNAL_IDS_V2.science,
      status,
      data: {
        outcome: outcome as 'correct',
        score: outcome === 'correct' ? 100 : 0,
        compliant: outcome === 'correct',
        latencyMs: c.latencyMs ?? 500,
        grader: 'first-token@1',
        transport: 'a2a',
        ...reason,
      },
    },
    c,
  );
}
