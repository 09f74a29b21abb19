/**
 * ScoreCache on its own, over a store double whose answers the test controls: finished answers are reused, memory
 * stays under its byte cap (least recently used goes first), invalidation drops exactly what changed, and an answer
 * read while an invalidation ran is not kept.
 */
import { describe, expect, it } from 'vitest';
import { PENDING, ScoreCache } from '../../src/serve/cache.js';
import type { Page, PageOptions, StoredScore } from '../../src/serve/store/types.js';
import type { SubjectScore } from '../../src/score/scores.js';
import { Gate } from './helpers.js';

const TOPIC = '0.0.7';

/** A store double: each subject's score total is `version[subject]`; every question is counted. */
function fakeStore() {
  const version = new Map<string, number>();
  const asked: string[] = [];
  const gate = new Gate();
  return {
    version,
    asked,
    hold: () => gate.hold(),
    async subjectScore(subject: string, { topic }: { topic?: string } = {}): Promise<StoredScore | null> {
      asked.push(subject);
      const v = version.get(subject);
      // Read before waiting: a held question answers what the store held when it was asked.
      await gate.passed();
      return stored(subject, v, topic!);
    },
    async scoresOf(keys: readonly { topic: string; subject: string }[]): Promise<StoredScore[]> {
      asked.push(`of:${keys.map((k) => k.subject).join(',')}`);
      const found = keys.map((k) => stored(k.subject, version.get(k.subject), k.topic));
      await gate.passed();
      return found.filter((s): s is StoredScore => s !== null && s.score !== null);
    },
    /** Pages of scored subjects in name order; the cursor is the last name. */
    async storedScores({ cursor, limit = 100 }: PageOptions = {}): Promise<Page<StoredScore>> {
      asked.push(`page:${cursor ?? ''}`);
      const names = [...version.keys()]
        .filter((s) => version.get(s)! >= 0 && (cursor === undefined || s > cursor))
        .sort();
      const items = names.slice(0, limit).map((s) => stored(s, version.get(s), TOPIC)!);
      await gate.passed();
      return { items, next: names.length > limit ? items.at(-1)!.subject : null };
    },
  };
}

function stored(subject: string, v: number | undefined, topic: string): StoredScore | null {
  if (v === undefined) return null;
  if (v < 0) return { topic, subject, fresh: false, score: null };
  return {
    topic,
    subject,
    fresh: true,
    score: { subject, trustScores: { total: v }, adapters: [], components: {} } as unknown as SubjectScore,
  };
}

const answer = async (cache: ScoreCache, subject: string) => cache.get(TOPIC, subject);

describe('ScoreCache', () => {
  it('keeps finished answers: a second lookup asks nothing, and its tag names the body', async () => {
    const store = fakeStore();
    store.version.set('a', 1);
    const cache = new ScoreCache(store);
    const first = await answer(cache, 'a');
    const second = await answer(cache, 'a');
    expect(store.asked).toEqual(['a']);
    expect(second).toBe(first);
    if (!first || first === PENDING) throw new Error('no answer');
    expect(JSON.parse(first.body.toString())).toEqual({
      subject: 'a',
      trustScores: { total: 1 },
      adapters: [],
      components: {},
    });
    expect(first.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(cache.hits).toBe(1);
  });

  it('answers null for an unknown subject and PENDING for an unscored one, and keeps neither', async () => {
    const store = fakeStore();
    store.version.set('p', -1);
    const cache = new ScoreCache(store);
    expect(await answer(cache, 'nobody')).toBeNull();
    expect(await answer(cache, 'p')).toBe(PENDING);
    expect(cache.size).toBe(0);
  });

  it('drops exactly the invalidated subjects; the next lookup reads the new answer with a new tag', async () => {
    const store = fakeStore();
    store.version.set('a', 1).set('b', 1);
    const cache = new ScoreCache(store);
    const a1 = await answer(cache, 'a');
    const b1 = await answer(cache, 'b');
    store.version.set('a', 2);
    cache.invalidate([{ topic: TOPIC, subject: 'a' }]);
    const a2 = await answer(cache, 'a');
    expect(await answer(cache, 'b')).toBe(b1);
    expect(a2).not.toBe(a1);
    if (!a1 || a1 === PENDING || !a2 || a2 === PENDING) throw new Error('no answer');
    expect(a2.etag).not.toBe(a1.etag);
    expect(store.asked).toEqual(['a', 'b', 'a']);
    // The same subject on another topic is another answer.
    cache.invalidate([{ topic: '0.0.8', subject: 'b' }]);
    expect(await answer(cache, 'b')).toBe(b1);
  });

  it('does not keep an answer that was being read while an invalidation ran', async () => {
    const store = fakeStore();
    store.version.set('a', 1);
    const cache = new ScoreCache(store);
    const open = store.hold();
    const stale = answer(cache, 'a');
    store.version.set('a', 2);
    cache.invalidate([{ topic: TOPIC, subject: 'a' }]);
    open();
    expect(await stale).toMatchObject({ fresh: true });
    const next = await answer(cache, 'a');
    if (!next || next === PENDING) throw new Error('no answer');
    expect(JSON.parse(next.body.toString()).trustScores.total).toBe(2);
    expect(store.asked).toEqual(['a', 'a']);
  });

  it('reload reads answers back in one question, so the next lookups ask nothing', async () => {
    const store = fakeStore();
    store.version.set('a', 1).set('b', 1).set('c', -1);
    const cache = new ScoreCache(store);
    const a1 = await answer(cache, 'a');
    store.version.set('a', 2).set('b', 2).set('c', 3);
    const changed = ['a', 'b', 'c', 'nobody'].map((subject) => ({ topic: TOPIC, subject }));
    cache.invalidate(changed);
    // b was never asked, c was unscored: their new answers are kept too; an unknown subject is not.
    expect(await cache.reload(changed)).toBe(3);
    expect(store.asked).toEqual(['a', 'of:a,b,c,nobody']);
    const a2 = await answer(cache, 'a');
    expect(a2).not.toBe(a1);
    if (!a2 || a2 === PENDING) throw new Error('no answer');
    expect(JSON.parse(a2.body.toString()).trustScores.total).toBe(2);
    expect(await answer(cache, 'c')).toMatchObject({ fresh: true });
    expect(store.asked).toHaveLength(2);
    expect(cache.size).toBe(3);
  });

  it('reload keeps what it read except the subjects invalidated while it read, and nothing after a clear', async () => {
    const store = fakeStore();
    store.version.set('a', 1).set('b', 1);
    const cache = new ScoreCache(store);
    const both = ['a', 'b'].map((subject) => ({ topic: TOPIC, subject }));
    let open = store.hold();
    let reloading = cache.reload(both);
    cache.invalidate([{ topic: TOPIC, subject: 'b' }]);
    open();
    expect(await reloading).toBe(1);
    store.asked.length = 0;
    await answer(cache, 'a');
    expect(store.asked).toEqual([]);
    await answer(cache, 'b');
    expect(store.asked).toEqual(['b']);

    cache.clear();
    open = store.hold();
    reloading = cache.reload(both);
    cache.clear();
    open();
    expect(await reloading).toBe(0);
    expect(cache.size).toBe(0);
  });

  it('shares one question among concurrent misses of one subject', async () => {
    const store = fakeStore();
    store.version.set('a', 1);
    const cache = new ScoreCache(store);
    const all = await Promise.all([answer(cache, 'a'), answer(cache, 'a'), answer(cache, 'a')]);
    expect(store.asked).toEqual(['a']);
    expect(new Set(all).size).toBe(1);
  });

  it('warms from the store page by page until full, evicting nothing; a subject invalidated during its read is left out', async () => {
    const store = fakeStore();
    for (let i = 0; i < 30; i++) store.version.set(`s${String(i).padStart(2, '0')}`, i);
    store.version.set('unscored', -1);
    const all = new ScoreCache(store);
    expect(await all.warm(7)).toBe(30);
    store.asked.length = 0;
    expect(await answer(all, 's29')).toMatchObject({ fresh: true });
    expect(store.asked).toEqual([]);

    const one = new ScoreCache(store);
    await answer(one, 's00');
    const small = new ScoreCache(store, one.byteSize * 10);
    expect(await small.warm(4)).toBe(10);
    expect(small.size).toBe(10);
    store.asked.length = 0;
    await answer(small, 's09');
    expect(store.asked).toEqual([]);

    const racing = new ScoreCache(store);
    const open = store.hold();
    const warming = racing.warm(100);
    racing.invalidate([{ topic: TOPIC, subject: 's03' }]);
    open();
    expect(await warming).toBe(29);
    store.asked.length = 0;
    await answer(racing, 's04');
    expect(store.asked).toEqual([]);
    await answer(racing, 's03');
    expect(store.asked).toEqual(['s03']);
  });

  it('stays under its byte cap, dropping the least recently asked first; clear() empties it', async () => {
    const store = fakeStore();
    for (let i = 0; i < 100; i++) store.version.set(`s${i}`, i);
    const one = new ScoreCache(store);
    await answer(one, 's0');
    const entry = one.byteSize;
    const cache = new ScoreCache(store, entry * 10);
    for (let i = 0; i < 10; i++) await answer(cache, `s${i}`);
    await answer(cache, 's0'); // now the most recently used
    // The next answer evicts one: not s0 (asked last) but s1, the least recently asked.
    await answer(cache, 's10');
    store.asked.length = 0;
    await answer(cache, 's0');
    expect(store.asked).toEqual([]);
    await answer(cache, 's1');
    expect(store.asked).toEqual(['s1']);
    for (let i = 11; i < 100; i++) {
      await answer(cache, `s${i}`);
      expect(cache.byteSize).toBeLessThanOrEqual(entry * 10);
    }
    expect(cache.size).toBeLessThanOrEqual(10);
    store.asked.length = 0;
    await answer(cache, 's99');
    expect(store.asked).toEqual([]);
    await answer(cache, 's1');
    expect(store.asked).toEqual(['s1']);
    cache.clear();
    expect(cache.size).toBe(0);
    expect(cache.byteSize).toBe(0);
    const none = new ScoreCache(store, 0);
    await answer(none, 's1');
    await answer(none, 's1');
    expect(none.size).toBe(0);
  });
});
