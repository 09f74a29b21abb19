/**
 * Binary searches over a topic's messages. Messages are stored in consensus order, so both consensus time and
 * the wall-clock time they reached consensus ascend with the index, and sequence number n sits at index n−1.
 */
import type { TopicMessage } from './state.js';

function lowerBound(msgs: readonly TopicMessage[], before: (m: TopicMessage) => boolean): number {
  let lo = 0;
  let hi = msgs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(msgs[mid] as TopicMessage)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Index of the first message with consensus time ≥ ns. */
export function firstIndexAtOrAfter(msgs: readonly TopicMessage[], ns: bigint): number {
  return lowerBound(msgs, (m) => m.ns < ns);
}

/** Index of the first message with consensus time > ns. */
export function firstIndexAfter(msgs: readonly TopicMessage[], ns: bigint): number {
  return lowerBound(msgs, (m) => m.ns <= ns);
}

/** How many messages a mirror lagging `lagMs` behind consensus can see now. */
export function visibleCount(msgs: readonly TopicMessage[], lagMs: number, nowMs = Date.now()): number {
  if (lagMs <= 0) return msgs.length;
  const cutoff = nowMs - lagMs;
  return lowerBound(msgs, (m) => m.wallMs <= cutoff);
}
