/**
 * What the HTML report draws from the signals: each subject's signals grouped by signal id (up to the scoring time),
 * and the points of its history charts.
 */
import { canonicalSignalId } from '../format/schema-v2.js';
import { consensusMs } from '../core/consensus-time.js';
import type { ReadSignal } from '../read/types.js';
import type { SubjectScore } from '../score/scores.js';
import { printable, signalOutcome } from './display.js';
import type { Point } from './html-charts.js';

export interface History {
  evals: Map<string, Point[]>;
  probes: Point[];
}

/** A subject's signals (up to the scoring time) by canonical signal id, each list in (sequence, index) order. */
export type SignalsBySubject = Map<string, Map<string, ReadSignal[]>>;

export function groupSignals(signals: Iterable<ReadSignal>, nowMs: number): SignalsBySubject {
  const out: SignalsBySubject = new Map();
  for (const s of signals) {
    // What the scores left out (after the scoring time) is not shown as if it had counted.
    if (!(consensusMs(s.consensusTimestamp) <= nowMs)) continue;
    const id = canonicalSignalId(s.message.signal);
    let bySignal = out.get(s.message.subject);
    if (!bySignal) {
      bySignal = new Map();
      out.set(s.message.subject, bySignal);
    }
    const list = bySignal.get(id);
    if (list) list.push(s);
    else bySignal.set(id, [s]);
  }
  for (const bySignal of out.values())
    for (const list of bySignal.values()) list.sort((a, b) => a.sequenceNumber - b.sequenceNumber || a.index - b.index);
  return out;
}

export function collectHistories(
  bySubject: SignalsBySubject,
  subjects: SubjectScore[],
  maxPoints: number,
): Map<string, History> {
  const out = new Map<string, History>();
  for (const { subject } of subjects) {
    const h: History = { evals: new Map(), probes: [] };
    for (const [id, list] of bySubject.get(subject) ?? []) {
      const points = list.slice(-maxPoints).map((s): Point => {
        const m = s.message;
        const o = signalOutcome(m);
        const label = o.reason ? `${o.word} (${printable(o.reason)})` : o.word;
        return {
          ms: consensusMs(s.consensusTimestamp),
          seq: s.sequenceNumber,
          run: m.run,
          word: o.word,
          label,
          value: m.data.latencyMs,
          ok: o.word === 'reachable',
        };
      });
      if (list.some((s) => 'reachable' in s.message.data)) h.probes.push(...points);
      else h.evals.set(id, points);
    }
    out.set(subject, h);
  }
  return out;
}
