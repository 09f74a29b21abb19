/**
 * ServeEvents keeping the score cache current, over a store double whose revisions the test makes: changes that
 * arrive while one is being handled are handled together (a slow database makes no backlog), rescored subjects are
 * read back into the cache, and a store that fails after close says nothing.
 */
import { describe, expect, it, vi } from 'vitest';
import { ScoreCache } from '../../src/serve/cache.js';
import { ServeEvents } from '../../src/serve/events.js';
import type { StoredScore, SubjectKey } from '../../src/serve/store/types.js';
import type { SubjectScore } from '../../src/score/scores.js';
import { Gate } from './helpers.js';

const TOPIC = '0.0.7';

function fakeStore() {
  let listener: ((revision: number) => void) | undefined;
  const gate = new Gate();
  let failing = false;
  const asked: number[] = [];
  const scored = (subject: string): StoredScore => ({
    topic: TOPIC,
    subject,
    fresh: true,
    score: { subject, trustScores: { total: 1 }, adapters: [], components: {} } as unknown as SubjectScore,
  });
  return {
    asked,
    /** The next changesSince calls wait until the returned function is called. */
    hold: () => gate.hold(),
    fail(): void {
      failing = true;
    },
    bump(revision: number): void {
      listener?.(revision);
    },
    revision: async () => 1,
    topics: async () => {
      if (failing) throw new Error('Cannot use a pool after calling end on the pool');
      return [];
    },
    watch(on: (revision: number) => void) {
      listener = on;
      return () => {
        listener = undefined;
      };
    },
    async changesSince(revision: number): Promise<Array<SubjectKey & { rescored: boolean }>> {
      asked.push(revision);
      await gate.passed();
      if (failing) throw new Error('Cannot use a pool after calling end on the pool');
      return [{ topic: TOPIC, subject: `s${revision}`, rescored: true }];
    },
    subjectScore: async (subject: string) => scored(subject),
    storedScores: async () => ({ items: [], next: null }),
    scoresOf: async (keys: readonly SubjectKey[]) => keys.map((k) => scored(k.subject)),
  };
}

describe('ServeEvents and the score cache', () => {
  it('handles the changes that came while one was handled as one, and reads the rescored subjects back', async () => {
    const store = fakeStore();
    const scores = new ScoreCache(store);
    const events = new ServeEvents({ store, scores, maxClients: 1 });
    events.start();
    await events.warmed;
    const open = store.hold();
    store.bump(2);
    await vi.waitFor(() => expect(store.asked).toEqual([1]));
    for (const r of [3, 4, 5]) store.bump(r);
    open();
    // Revisions 3 and 4 were never asked about on their own: the newest one, 5, covers them.
    await vi.waitFor(() => expect(store.asked).toEqual([1, 2]));
    await vi.waitFor(() => expect(scores.size).toBe(2));
    const before = scores.misses;
    await scores.get(TOPIC, 's1');
    expect(scores.misses).toBe(before);
    events.close();
  });

  it('says nothing of a store that fails after it closed', async () => {
    const store = fakeStore();
    const onError = vi.fn();
    const events = new ServeEvents({ store, scores: new ScoreCache(store), maxClients: 1, onError });
    events.start();
    await events.warmed;
    const open = store.hold();
    store.bump(2);
    await vi.waitFor(() => expect(store.asked).toHaveLength(1));
    events.close();
    store.fail();
    open();
    store.bump(3);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(onError).not.toHaveBeenCalled();
  });
});
