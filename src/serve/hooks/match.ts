/**
 * Which hooks a subject's change concerns, and the body each delivery carries. A score crosses threshold t upward
 * when it goes from below t to t or more, downward when it goes from t or more to below t; a subject's availability is
 * whether its latest probe was reachable, and it changes when that flips. What the alerting had not seen before
 * (a new subject, a first probe) only becomes what it compares with next time.
 */
import { randomUUID } from 'node:crypto';
import type { QueuedDelivery, StoredHook, SubjectChange } from '../store/hook-types.js';

interface Common {
  /** The delivery id (also `X-Hcs25-Delivery`): a receiver drops one it has seen. */
  id: string;
  hook: string;
  /** When the change was seen (ISO). */
  at: string;
  topic: string;
  subject: string;
  /** The store revision the change was seen at. */
  revision: number;
}

export interface ScoreCrossedPayload extends Common {
  event: 'score-crossed';
  threshold: number;
  direction: 'up' | 'down';
  previous: number;
  current: number;
}

export interface AvailabilityChangedPayload extends Common {
  event: 'availability-changed';
  /** The latest probe's answer. */
  reachable: boolean;
  previous: boolean;
}

export type HookPayload = ScoreCrossedPayload | AvailabilityChangedPayload;

/** The deliveries the changes call for, one per hook and crossed threshold or availability flip. */
export function planDeliveries(
  changes: readonly SubjectChange[],
  hooks: readonly StoredHook[],
  now: Date,
  newId: () => string = randomUUID,
): QueuedDelivery[] {
  const out: QueuedDelivery[] = [];
  const at = now.toISOString();
  for (const change of changes) {
    const { previousTotal: previous, total: current } = change;
    const moved = previous !== null && current !== null && previous !== current;
    const flipped =
      change.previousReachable !== null && change.reachable !== null && change.previousReachable !== change.reachable;
    if (!moved && !flipped) continue;
    for (const hook of hooks) {
      if (hook.topic !== null && hook.topic !== change.topic) continue;
      if (hook.subjects !== null && !hook.subjects.includes(change.subject)) continue;
      const common = { hook: hook.id, at, topic: change.topic, subject: change.subject, revision: change.revision };
      const payloads: HookPayload[] = [];
      if (moved && hook.events.includes('score-crossed'))
        for (const threshold of hook.thresholds ?? []) {
          const direction = crossing(previous, current, threshold);
          if (direction)
            payloads.push({ id: newId(), event: 'score-crossed', ...common, threshold, direction, previous, current });
        }
      if (flipped && hook.events.includes('availability-changed'))
        payloads.push({
          id: newId(),
          event: 'availability-changed',
          ...common,
          reachable: change.reachable!,
          previous: change.previousReachable!,
        });
      for (const p of payloads)
        out.push({
          id: p.id,
          hook: hook.id,
          event: p.event,
          topic: p.topic,
          subject: p.subject,
          body: JSON.stringify(p),
        });
    }
  }
  return out;
}

/** Up: from below the threshold to it or above; down: from it or above to below. */
export function crossing(previous: number, current: number, threshold: number): 'up' | 'down' | undefined {
  if (previous < threshold && current >= threshold) return 'up';
  if (previous >= threshold && current < threshold) return 'down';
  return undefined;
}
