import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadSignal } from '../../src/read/types.js';
import type { ServeStore } from '../../src/serve/store/types.js';
import { HOUR, T0, evalSignal, probe, uaid } from '../support/signals.js';
import { indexAndScore, storeEngines } from './helpers.js';

const { engines } = storeEngines('serve-sync');

const SUBJECTS = ['a', 'b', 'c', 'd', 'e'].map((n) => uaid(`${n}.example.com`));

// One subject per round: each gets its own revision, so the change order is known.
const apply = (store: ServeStore, topic: string, signals: ReadSignal[], now: Date) =>
  indexAndScore(store, topic, signals, now, 1);

/** Every page of the changes after `since`; returns the subjects in order and the last token. */
async function allChanges(store: ServeStore, topic: string, since: string | Date, limit: number) {
  const subjects: string[] = [];
  let token: string | Date = since;
  let pages = 0;
  for (;;) {
    const page = await store.updatedSubjects(topic, token, limit);
    expect(page.items.length).toBeLessThanOrEqual(limit);
    subjects.push(...page.items.map((c) => c.subject));
    token = page.token;
    pages++;
    if (!page.more) return { subjects, token, pages };
  }
}

describe.each(engines)('sync and export reads on $name', ({ open }) => {
  let store: ServeStore;
  beforeAll(async () => {
    store = await open();
  }, 60_000);
  afterAll(async () => {
    await store?.close();
  });

  it('updated_since: every subject once in change order, paged; a token continues with later changes only', async () => {
    const topic = '0.0.500';
    const t1 = new Date(T0 + HOUR);
    await apply(
      store,
      topic,
      SUBJECTS.map((s, i) => probe(s, { seq: i + 1, at: T0 + i * 1000 })),
      t1,
    );
    const first = await allChanges(store, topic, new Date(T0), 2);
    expect([...first.subjects].sort()).toEqual([...SUBJECTS].sort());
    expect(first.pages).toBe(3);
    const revs = (await store.updatedSubjects(topic, new Date(T0), 100)).items.map((c) => c.rev);
    expect(revs).toEqual([...revs].sort((a, b) => a - b));
    expect(new Set(revs).size).toBe(SUBJECTS.length);

    // Nothing changed since: an empty page whose token still finds the next change.
    const quiet = await store.updatedSubjects(topic, first.token, 10);
    expect(quiet).toMatchObject({ items: [], more: false, token: first.token });

    const t2 = new Date(T0 + 2 * HOUR);
    await apply(
      store,
      topic,
      [SUBJECTS[3]!, SUBJECTS[1]!].map((s, i) => evalSignal(s, 'math', 'correct', { seq: 10 + i, at: T0 + HOUR + i })),
      t2,
    );
    const later = await allChanges(store, topic, first.token, 1);
    expect([...later.subjects].sort()).toEqual([SUBJECTS[1], SUBJECTS[3]].sort());
    const changed = (await store.updatedSubjects(topic, first.token, 10)).items;
    expect(changed.every((c) => c.score.trustScoreUpdatedAt === t2.toISOString())).toBe(true);

    // The time form: the subjects rescored at or after that time; after the last change, none (and a token).
    expect((await allChanges(store, topic, t2, 10)).subjects.sort()).toEqual([SUBJECTS[1], SUBJECTS[3]].sort());
    const none = await store.updatedSubjects(topic, new Date(t2.getTime() + 1), 10);
    expect(none.items).toEqual([]);
    await apply(store, topic, [probe(SUBJECTS[4]!, { seq: 20, at: T0 + 2 * HOUR })], new Date(T0 + 3 * HOUR));
    expect((await store.updatedSubjects(topic, none.token, 10)).items.map((c) => c.subject)).toEqual([SUBJECTS[4]]);
    // Other topics' subjects are not listed.
    expect((await store.updatedSubjects('0.0.501', new Date(T0), 10)).items).toEqual([]);
  });

  it('rejects a token it did not give out', async () => {
    await expect(store.updatedSubjects('0.0.500', 'bm90LWEtdG9rZW4', 10)).rejects.toMatchObject({ code: 'USAGE' });
  });

  it('topicSignals: the window [from, to) in consensus order, keyset paged, packed messages included', async () => {
    const topic = '0.0.510';
    const signals: ReadSignal[] = [];
    for (let m = 0; m < 12; m++) {
      // Each message holds three signals (a pack): same sequence number and time, indexes 0..2.
      for (let i = 0; i < 3; i++)
        signals.push(probe(SUBJECTS[i]!, { seq: m + 1, at: T0 + m * HOUR, index: i, run: m }));
    }
    await apply(store, topic, signals, new Date(T0 + 20 * HOUR));
    const from = new Date(T0 + 2 * HOUR);
    const to = new Date(T0 + 9 * HOUR);
    const expected = signals.filter(
      (s) => Date.parse(s.consensusAt) >= from.getTime() && Date.parse(s.consensusAt) < to.getTime(),
    );
    expect(expected.length).toBe(21);
    const got: ReadSignal[] = [];
    let cursor: string | null = null;
    do {
      const page = await store.topicSignals(topic, { from, to }, { limit: 4, ...(cursor !== null && { cursor }) });
      got.push(...page.items);
      cursor = page.next;
    } while (cursor !== null);
    expect(got.map((s) => [s.sequenceNumber, s.index])).toEqual(expected.map((s) => [s.sequenceNumber, s.index]));
    expect(got[0]).toEqual(expected[0]);
    expect((await store.topicSignals('0.0.511', { from, to })).items).toEqual([]);
  });

  it('subjectSignalsOf: one subject, all payers or only the given ones, in topic order', async () => {
    const topic = '0.0.520';
    const subject = SUBJECTS[0]!;
    const signals = [
      probe(subject, { seq: 1, at: T0, payer: '0.0.1001' }),
      probe(subject, { seq: 2, at: T0 + 1000, payer: '0.0.2002' }),
      probe(SUBJECTS[1]!, { seq: 3, at: T0 + 2000, payer: '0.0.2002' }),
      evalSignal(subject, 'math', 'correct', { seq: 4, at: T0 + 3000, payer: '0.0.3003' }),
    ];
    await apply(store, topic, signals, new Date(T0 + HOUR));
    expect((await store.subjectSignalsOf(topic, subject)).map((s) => s.sequenceNumber)).toEqual([1, 2, 4]);
    const some = await store.subjectSignalsOf(topic, subject, ['0.0.3003', '0.0.2002']);
    expect(some.map((s) => s.payerAccountId)).toEqual(['0.0.2002', '0.0.3003']);
    expect(await store.subjectSignalsOf(topic, subject, ['0.0.9'])).toEqual([]);
  });
});
