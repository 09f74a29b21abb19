/**
 * The store suite, run against both engines: PGlite (embedded) and a real PostgreSQL server started here.
 */
import { VERDICTS } from '../../src/verify/findings.js';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeScores } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import { collectTopicSignals } from '../../src/read/reader.js';
import { buildRevealMessageV2 } from '../../src/format/write.js';
import { openStore } from '../../src/serve/store/index.js';
import { migrations } from '../../src/serve/store/migrate.js';
import { openPostgresStore } from '../../src/serve/store/postgres.js';
import type { ServeStore } from '../../src/serve/store/types.js';
import { pgliteExecutor } from '../../src/serve/store/pglite.js';
import { createSqlStore } from '../../src/serve/store/sql.js';
import type { SqlExecutor } from '../../src/serve/store/types.js';
import { fleetSignals } from '../format/fleet.js';
import { RUN, RUN_KEY } from '../format/fixtures.js';
import { batchOf, packed, PAYER, toMessages, indexAndScore, storeEngines } from './helpers.js';
import type { ReadSignal } from '../../src/read/types.js';
import { HOUR, T0, probe, runId, signalV2, uaid } from '../support/signals.js';
import type { SignalMessageV2 } from '../../src/format/schema-v2.js';

const AGENTS = 40;
const signals = fleetSignals(AGENTS);
const NOW = new Date('2026-11-21T12:00:00.000Z');

const { engines, stateDir, postgres } = storeEngines('serve');

describe.each(engines)('ServeStore on $name', ({ name, open }) => {
  let store: ServeStore;
  beforeAll(async () => {
    store = await open();
  }, 60_000);
  afterAll(async () => {
    await store?.close();
  });

  it('applies migrations once, idempotently', async () => {
    expect(store.engine).toBe(name);
    await store.migrate();
    await store.migrate();
    expect(await store.cursor('0.0.1')).toBeNull();
  });

  it('stores a batch atomically with its cursor and ignores a replay', async () => {
    const topic = '0.0.10';
    const messages = toMessages(packed(signals));
    const batch = batchOf(messages);
    const before = await store.revision();
    const first = await store.applyBatch(topic, batch);
    expect(first).toMatchObject({ applied: true, signals: signals.length, duplicates: 0 });
    expect(first.revision).toBeGreaterThan(before);
    expect(await store.cursor(topic)).toEqual({
      sequence: messages.length,
      consensusTimestamp: messages.at(-1)!.consensusTimestamp,
    });

    // The same batch again (a crash after commit, before the indexer learnt of it): nothing changes.
    expect(await store.applyBatch(topic, batch)).toMatchObject({ applied: false, signals: 0 });
    const [status] = (await store.topics()).filter((t) => t.topic === topic);
    expect(status).toMatchObject({
      lastSequence: messages.length,
      source: 'rest',
      counts: { signals: signals.length, rejected: {} },
    });
  });

  it('an overlapping batch stores only what is after the cursor; a re-published signal is a counted duplicate', async () => {
    const topic = '0.0.11';
    const one = toMessages(packed(signals.slice(0, 30), 'none'));
    await store.applyBatch(topic, batchOf(one.slice(0, 10)));
    const r = await store.applyBatch(topic, batchOf(one.slice(5, 20)));
    expect(r).toMatchObject({ applied: true, signals: 10, duplicates: 0 });
    // The same signal published again later (another message): first one wins, across batches.
    const again = toMessages(packed(signals.slice(0, 3), 'none'), 21);
    expect(await store.applyBatch(topic, batchOf(again))).toMatchObject({ signals: 0, duplicates: 3 });
    const [status] = (await store.topics()).filter((t) => t.topic === topic);
    expect(status!.counts).toMatchObject({ signals: 20, rejected: { duplicate: 3 } });
  });

  it('a failing batch leaves nothing behind (one transaction)', async () => {
    const topic = '0.0.12';
    const batch = batchOf(toMessages(packed(signals.slice(0, 6), 'none')));
    // A NUL byte is not storable in PostgreSQL text: the batch fails after its first statements ran.
    const bad = { ...batch, cursor: { ...batch.cursor, consensusTimestamp: 'x\u0000' } };
    await expect(store.applyBatch(topic, bad)).rejects.toThrow();
    expect(await store.cursor(topic)).toBeNull();
    expect((await store.subjectSignals(signals[0]!.subject, { topic })).items).toEqual([]);
    expect(await store.applyBatch(topic, batch)).toMatchObject({ applied: true, signals: 6 });
  });

  it('overlapping applyBatch calls are written in call order; after a failure the topic waits for cursor()', async () => {
    const topic = '0.0.17';
    const messages = toMessages(packed(signals.slice(0, 12), 'none'));
    const results = await Promise.all([0, 4, 8].map((i) => store.applyBatch(topic, batchOf(messages.slice(i, i + 4)))));
    expect(results.map((r) => r.signals)).toEqual([4, 4, 4]);
    const bad = batchOf(toMessages(packed(signals.slice(12, 14), 'none'), 13));
    const broken = { ...bad, cursor: { ...bad.cursor, consensusTimestamp: 'x\u0000' } };
    const good = batchOf(toMessages(packed(signals.slice(14, 16), 'none'), 15));
    const [a, b] = await Promise.allSettled([store.applyBatch(topic, broken), store.applyBatch(topic, good)]);
    expect([a.status, b.status]).toEqual(['rejected', 'rejected']);
    // Applying `good` now would move the cursor past the lost batch: refused until the cursor is read.
    await expect(store.applyBatch(topic, good)).rejects.toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
    expect(await store.cursor(topic)).toMatchObject({ sequence: 12 });
    expect(await store.applyBatch(topic, bad)).toMatchObject({ applied: true, signals: 2 });
    expect(await store.applyBatch(topic, good)).toMatchObject({ applied: true, signals: 2 });
  });

  it('counts rejections, unknowns and records; applies the publisher allow-list', async () => {
    const topic = '0.0.13';
    const bodies = [
      Buffer.from('not json'),
      Buffer.from(JSON.stringify({ p: 'hcs-25', op: 'signal', v: 9 })),
      ...packed(signals.slice(0, 3), 'none'),
      Buffer.from(
        buildRevealMessageV2({
          run: RUN,
          key: RUN_KEY.toString('base64url'),
          seed: 's',
          generator: 'simple@1',
          grader: 'first-token@1',
        }).json,
      ),
    ];
    const messages = [...toMessages(bodies), ...toMessages(packed(signals.slice(3, 4), 'none'), 5, '0.0.666')];
    await store.applyBatch(topic, batchOf(messages, [PAYER]));
    const [status] = (await store.topics()).filter((t) => t.topic === topic);
    expect(status!.counts).toEqual({
      signals: 3,
      records: { reveal: 1 },
      rejected: { 'bad-json': 1, 'publisher-not-allowed': 1 },
      unknown: { 'version:9': 1 },
    });
    expect(status!.lagMs).toBeGreaterThan(0);
    const runs = await store.runs({ topic });
    expect(runs.items).toEqual([expect.objectContaining({ run: RUN, signals: 3, revealed: true, verification: null })]);
  });

  it('scores dirty subjects with computeScores, as hcs25 scores does', async () => {
    const topic = '0.0.14';
    const messages = toMessages(packed(signals));
    await store.applyBatch(topic, batchOf(messages));
    const unscored = await store.subjectScore(signals[0]!.subject, { topic });
    expect(unscored).toMatchObject({ fresh: false, score: null });
    // Bounded rounds of at most 7 subjects (other tests' topics have dirty subjects too).
    for (;;) {
      const r = await store.rescoreDirty({ limit: 7, now: NOW });
      expect(r.subjects).toBeLessThanOrEqual(7);
      if (!r.more) break;
    }
    const read = await collectTopicSignalsOf(messages);
    const expected = computeScores(read, DEFAULT_SCORING_CONFIG, { now: NOW, topic });
    const got = await store.subjectScore(expected.subjects[0]!.subject, { topic });
    expect(got).toEqual({
      topic,
      subject: expected.subjects[0]!.subject,
      fresh: true,
      score: expected.subjects[0],
      identity: expect.any(Object),
    });
    expect((await store.rescoreDirty({ now: NOW })).subjects).toBe(0);
  });

  it('pages every stored score with its freshness (what a score cache warms from)', async () => {
    const topic = '0.0.19';
    // The first signals, but one: the last of them whose subject has an earlier one comes later.
    const k = [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1].find((i) =>
      signals.slice(0, i).some((o) => o.subject === signals[i]!.subject),
    )!;
    const some = signals.slice(0, k);
    const newer = signals[k]!;
    await store.applyBatch(topic, batchOf(toMessages(packed(some, 'none'))));
    while ((await store.rescoreDirty({ now: NOW })).more);
    // One subject has a newer signal: its stored score is not fresh.
    await store.applyBatch(topic, batchOf(toMessages(packed([newer], 'none'), 1000)));
    const got: Array<{ subject: string; fresh: boolean; total: number }> = [];
    let cursor: string | undefined;
    do {
      const page = await store.storedScores({ limit: 3, ...(cursor !== undefined && { cursor }) });
      expect(page.items.length).toBeLessThanOrEqual(3);
      for (const s of page.items)
        if (s.topic === topic) got.push({ subject: s.subject, fresh: s.fresh, total: s.score!.trustScores.total });
      cursor = page.next ?? undefined;
    } while (cursor);
    const subjects = [...new Set(some.map((s) => s.subject))].sort();
    expect(got.map((g) => g.subject).sort()).toEqual(subjects);
    for (const g of got) {
      const one = (await store.subjectScore(g.subject, { topic }))!;
      expect(g).toEqual({ subject: g.subject, fresh: one.fresh, total: one.score!.trustScores.total });
    }
    expect(got.filter((g) => !g.fresh).map((g) => g.subject)).toEqual([newer.subject]);

    // scoresOf answers the same for the subjects asked, scored ones only, whatever else is asked beside them.
    const asked = [
      ...got.map((g) => ({ topic, subject: g.subject })),
      { topic, subject: 'uaid:aid:nobody' },
      { topic: '0.0.999', subject: got[0]!.subject },
    ];
    const found = await store.scoresOf(asked);
    expect(
      found
        .map((s) => ({ subject: s.subject, fresh: s.fresh, total: s.score!.trustScores.total }))
        .sort((a, b) => (a.subject < b.subject ? -1 : 1)),
    ).toEqual([...got].sort((a, b) => (a.subject < b.subject ? -1 : 1)));
    expect(found.every((s) => s.topic === topic)).toBe(true);
    expect(await store.scoresOf([])).toEqual([]);
  });

  it('pages subjects by score with filters, bounded, keyset cursors', async () => {
    const topic = '0.0.14';
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await store.listSubjects({ topic }, { limit: 6, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(6);
      seen.push(...page.items.map((i) => `${i.total}|${i.score.evidenceStrength.evalObservations}|${i.subject}`));
      cursor = page.next ?? undefined;
      pages++;
    } while (cursor);
    expect(pages).toBe(Math.ceil(AGENTS / 6));
    expect(seen).toHaveLength(AGENTS);
    const ranked = [...seen].sort((a, b) => {
      const [sa, ea, ua] = a.split('|');
      const [sb, eb, ub] = b.split('|');
      return Number(sb) - Number(sa) || Number(eb) - Number(ea) || (ua! < ub! ? -1 : 1);
    });
    expect(seen).toEqual(ranked);

    const a2a = await store.listSubjects({ topic, protocol: 'a2a' }, { limit: 1000 });
    expect(a2a.items.length).toBe(AGENTS / 4);
    expect(a2a.items.every((i) => i.protocol === 'a2a')).toBe(true);
    const high = await store.listSubjects({ topic, minScore: 50, minConfidence: 0.1 });
    expect(high.items.every((i) => i.total >= 50 && i.confidence >= 0.1)).toBe(true);
    expect((await store.listSubjects({ topic, publisher: PAYER })).items.length).toBe(Math.min(AGENTS, 100));
    expect((await store.listSubjects({ topic, publisher: '0.0.999' })).items).toEqual([]);
    expect((await store.listSubjects({ topic }, { limit: 5000 })).items.length).toBe(AGENTS);
    await expect(store.listSubjects({ topic }, { cursor: 'garbage' })).rejects.toMatchObject({ code: 'USAGE' });
  });

  it('stores who a subject is from the registry its signals cite; searches by name, UAID, endpoint and registry', async () => {
    const topic = '0.0.26';
    const [calc, files, other, uncited] = [
      uaid('calc.example.com'),
      uaid('files.mcp.dev', 'mcp'),
      uaid('other.example.org', 'rest'),
      uaid('nobody.example.net'),
    ];
    const cite = (subject: string, seq: number, registry?: string) =>
      probe(subject, { seq, at: T0 + seq * 1000, ...(registry && { sources: [registry] }) });
    const applyAll = (list: ReadSignal[]) => indexAndScore(store, topic, list, NOW);
    await applyAll([
      cite(calc, 1, 'hcs://2/0.0.700'),
      cite(files, 2, 'hcs://10/0.0.700'),
      cite(other, 3, 'hcs://2/0.0.701'),
      cite(uncited, 4),
    ]);
    const due = await store.identitiesDue({ limit: 1000 });
    expect(due.filter((d) => d.registry.startsWith('0.0.70'))).toEqual([
      { registry: '0.0.700', until: cite(files, 2).consensusTimestamp, unresolved: 2 },
      { registry: '0.0.701', until: cite(other, 3).consensusTimestamp, unresolved: 1 },
    ]);
    const first = await store.dueIdentities('0.0.700', { limit: 1 });
    const second = await store.dueIdentities('0.0.700', { limit: 1, cursor: first.next! });
    expect([...first.items, ...second.items].sort((a, b) => a.citedSeq - b.citedSeq)).toEqual([
      { topic, subject: calc, citedSeq: 1 },
      { topic, subject: files, citedSeq: 2 },
    ]);
    expect(second.next).toBeNull();

    // Before anything is read: pending, with the cited registry and the UAID's protocol.
    expect((await store.subjectScore(calc, { topic }))?.identity).toMatchObject({
      status: 'pending',
      registry: '0.0.700',
      protocol: 'a2a',
      name: null,
    });
    expect((await store.subjectScore(uncited, { topic }))?.identity).toMatchObject({
      status: 'uncited',
      registry: null,
    });
    const before = await store.revision();
    const entry = (name: string, endpoint: string, sequence: number, protocol = 'a2a') => ({
      name,
      protocol,
      endpoint,
      accountId: null,
      entry: `hcs://2/0.0.700#${sequence}`,
      sequence,
    });
    await store.saveIdentities([
      {
        topic,
        subject: calc,
        citedSeq: 1,
        registry: '0.0.700',
        status: 'resolved',
        entry: entry('Calc Bot', 'https://calc.example.com/a2a', 3),
      },
      { topic, subject: files, citedSeq: 2, registry: '0.0.700', status: 'not-listed' },
    ]);
    expect(await store.identitiesUnavailable('0.0.701', 'mirror node: 503')).toBe(1);
    // The same failure again changes nothing: no write.
    const quiet = await store.revision();
    expect(await store.identitiesUnavailable('0.0.701', 'mirror node: 503')).toBe(0);
    expect(await store.revision()).toBe(quiet);
    // The answers changed: caches learn it from changesSince.
    const changed = await store.changesSince(before, 100);
    expect(
      changed
        ?.filter((c) => c.topic === topic)
        .map((c) => c.subject)
        .sort(),
    ).toEqual([calc, files, other].sort());
    expect((await store.subjectScore(calc, { topic }))?.identity).toEqual({
      name: 'Calc Bot',
      protocol: 'a2a',
      endpoint: 'https://calc.example.com/a2a',
      accountId: null,
      registry: '0.0.700',
      entry: 'hcs://2/0.0.700#3',
      sequence: 3,
      status: 'resolved',
      note: null,
    });
    expect((await store.scoresOf([{ topic, subject: files }]))[0]?.identity).toMatchObject({ status: 'not-listed' });
    expect(
      (await store.storedScores({ limit: 1000 })).items.find((x) => x.topic === topic && x.subject === other)?.identity,
    ).toMatchObject({ status: 'unavailable', note: 'mirror node: 503', protocol: 'http' });
    expect((await store.identitiesDue({ limit: 1000 })).map((d) => d.registry)).toContain('0.0.701');
    expect((await store.identitiesDue({ limit: 1000 })).map((d) => d.registry)).not.toContain('0.0.700');

    const subjects = async (filter: Parameters<ServeStore['listSubjects']>[0]) =>
      (await store.listSubjects({ topic, ...filter })).items.map((r) => r.subject).sort();
    expect(await subjects({ q: 'calc bot' })).toEqual([calc]);
    expect(await subjects({ q: 'CALC.EXAMPLE' })).toEqual([calc]);
    expect(await subjects({ q: '/a2a' })).toEqual([calc]);
    expect(await subjects({ q: 'files.mcp' })).toEqual([files]);
    // LIKE's own characters are taken literally.
    expect(await subjects({ q: '%' })).toEqual([]);
    expect(await subjects({ q: 'calc_example' })).toEqual([]);
    expect(await subjects({ registry: '0.0.700' })).toEqual([calc, files].sort());
    expect(await subjects({ registry: '0.0.701', q: 'other' })).toEqual([other]);
    expect(await subjects({ registry: '0.0.702' })).toEqual([]);
    const row = (await store.listSubjects({ topic, q: 'calc bot' })).items[0]!;
    expect(row.identity.name).toBe('Calc Bot');

    // A newer signal citing the same registry: due again, the entry kept until it is read; an answer for the older
    // citation changes nothing.
    await applyAll([cite(calc, 5, 'hcs://2/0.0.700')]);
    expect((await store.dueIdentities('0.0.700')).items).toEqual([{ topic, subject: calc, citedSeq: 5 }]);
    await store.saveIdentities([
      {
        topic,
        subject: calc,
        citedSeq: 1,
        registry: '0.0.700',
        status: 'resolved',
        entry: entry('Old', 'https://old.example', 1),
      },
    ]);
    expect((await store.subjectScore(calc, { topic }))?.identity).toMatchObject({ name: 'Calc Bot', sequence: 3 });
    // An unreadable registry keeps what was resolved before.
    expect(await store.identitiesUnavailable('0.0.700', 'down')).toBe(1);
    expect((await store.subjectScore(calc, { topic }))?.identity).toMatchObject({
      name: 'Calc Bot',
      status: 'resolved',
      note: 'down',
    });
    await store.saveIdentities([
      {
        topic,
        subject: calc,
        citedSeq: 5,
        registry: '0.0.700',
        status: 'resolved',
        entry: entry('Calc Bot 2', 'https://calc.example.com/v2', 9),
      },
    ]);
    expect((await store.subjectScore(calc, { topic }))?.identity).toMatchObject({
      name: 'Calc Bot 2',
      sequence: 9,
      note: null,
    });
    expect((await store.dueIdentities('0.0.700')).items).toEqual([]);

    // A newer signal citing another registry forgets the old entry; an answer from the old registry is dropped.
    await applyAll([cite(calc, 6, 'hcs://2/0.0.701')]);
    expect((await store.subjectScore(calc, { topic }))?.identity).toMatchObject({
      status: 'pending',
      registry: '0.0.701',
      name: null,
      entry: null,
    });
    await store.saveIdentities([
      {
        topic,
        subject: calc,
        citedSeq: 6,
        registry: '0.0.700',
        status: 'resolved',
        entry: entry('Stale', 'https://x', 1),
      },
    ]);
    expect((await store.subjectScore(calc, { topic }))?.identity?.name).toBeNull();
  });

  it('ranks equal totals by evidence: a thin or availability-only subject after a well-evidenced one, across pages', async () => {
    const topic = '0.0.40';
    await store.applyBatch(topic, batchOf(toMessages(packed(evidenceFleet(), 'none'))));
    while ((await store.rescoreDirty({ now: NOW })).more);
    const order: string[] = [];
    let cursor: string | undefined;
    do {
      // One subject a page: every cursor falls inside a tie of totals.
      const page = await store.listSubjects({ topic }, { limit: 1, ...(cursor ? { cursor } : {}) });
      order.push(...page.items.map((i) => `${i.total} ${nativeIdOf(i.subject)}`));
      cursor = page.next ?? undefined;
    } while (cursor);
    // By name alone the MCP servers would come first.
    expect(order).toEqual(['100 z-well.example', '100 m-thin.example', '100 a-mcp.example', '100 b-mcp.example']);
    const names = async (filter: Parameters<ServeStore['listSubjects']>[0]) =>
      (await store.listSubjects({ topic, ...filter })).items.map((i) => nativeIdOf(i.subject));
    expect(await names({ basis: 'availability-only' })).toEqual(['a-mcp.example', 'b-mcp.example']);
    expect(await names({ basis: 'evals' })).toEqual(['z-well.example', 'm-thin.example']);
    expect(await names({ evidence: 'low' })).toEqual(['m-thin.example']);
    expect(await names({ evidence: 'sufficient' })).toEqual(['z-well.example', 'a-mcp.example', 'b-mcp.example']);
    expect(await names({ minEvalObservations: 3 })).toEqual(['z-well.example']);
    const [well] = (await store.listSubjects({ topic }, { limit: 1 })).items;
    expect(well!.score.evidenceStrength).toMatchObject({ basis: 'evals', evalObservations: 20, lowEvidence: false });
  });

  it('pages a subject history as hcs25 signals rows, both orders', async () => {
    const topic = '0.0.14';
    const subject = signals[0]!.subject;
    const first = await store.subjectSignals(subject, { topic, limit: 2, order: 'asc' });
    expect(first.items).toHaveLength(2);
    const rest = await store.subjectSignals(subject, { topic, limit: 2, order: 'asc', cursor: first.next! });
    expect(rest.items).toHaveLength(1);
    expect(rest.next).toBeNull();
    const all = [...first.items, ...rest.items];
    expect(all.map((s) => s.message)).toEqual(signals.filter((s) => s.subject === subject));
    expect(all[0]).toMatchObject({ topic, payerAccountId: PAYER, sequenceNumber: 1, consensusAt: expect.any(String) });
    const desc = await store.subjectSignals(subject, { topic, limit: 10 });
    expect(desc.items).toEqual([...all].reverse());
  });

  it('verifies a run against its reveal, and recomputes when a late signal arrives', async () => {
    const topic = '0.0.15';
    const reveal = Buffer.from(
      buildRevealMessageV2({
        run: RUN,
        key: RUN_KEY.toString('base64url'),
        seed: 's',
        generator: 'simple@1',
        grader: 'first-token@1',
      }).json,
    );
    await store.applyBatch(topic, batchOf(toMessages([...packed(signals.slice(0, 6), 'none'), reveal])));
    expect((await store.runs({ topic })).items[0]!.reveal).toEqual({
      sequenceNumber: 7,
      consensusTimestamp: toMessages([reveal], 7)[0]!.consensusTimestamp,
    });
    const v = await store.runVerification(topic, RUN);
    expect(v).toMatchObject({ topic, run: RUN, revealed: true });
    const total = VERDICTS.reduce((n, verdict) => n + v!.report.counts[verdict], 0);
    expect(total).toBe(6);
    expect((await store.runs({ topic })).items[0]!.verification).toEqual(v!.report.counts);
    // Stored: the same result until something changes.
    expect((await store.runVerification(topic, RUN))!.computedAt).toBe(v!.computedAt);
    await store.applyBatch(topic, batchOf(toMessages(packed(signals.slice(6, 9), 'none'), 8)));
    expect((await store.runs({ topic })).items[0]!.verification).toBeNull();
    const again = await store.runVerification(topic, RUN);
    const c = again!.report.counts;
    expect(VERDICTS.reduce((n, verdict) => n + c[verdict], 0)).toBe(9);
    expect(await store.runVerification(topic, 'NOPE')).toBeNull();
  });

  it('lists runs oldest or newest first, a page at a time; a run not revealed has no reveal', async () => {
    const topic = '0.0.46';
    const probes = [0, 1, 2, 3, 4].map((r) =>
      probe(uaid('runs.example.com'), { seq: r + 1, at: T0 + r * HOUR, run: r }),
    );
    await store.applyBatch(topic, {
      signals: probes,
      records: [],
      unknown: [],
      rejected: [],
      cursor: { sequence: 5, consensusTimestamp: probes[4]!.consensusTimestamp },
      source: 'rest',
    });
    const ids = [0, 1, 2, 3, 4].map(runId);
    for (const order of ['asc', 'desc'] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.runs({ topic, order, limit: 2, ...(cursor !== undefined && { cursor }) });
        expect(page.items.length).toBeLessThanOrEqual(2);
        expect(page.items.every((r) => r.reveal === null && !r.revealed)).toBe(true);
        seen.push(...page.items.map((r) => r.run));
        cursor = page.next ?? undefined;
      } while (cursor);
      expect(seen).toEqual(order === 'asc' ? ids : [...ids].reverse());
    }
  });

  it('watch reports new revisions', async () => {
    const got: number[] = [];
    const stop = store.watch((r) => got.push(r), { intervalMs: 20 });
    await new Promise((r) => setTimeout(r, 60));
    await store.setTopicState('0.0.16', { note: 'x' });
    await store.applyBatch('0.0.16', batchOf(toMessages(packed(signals.slice(0, 1), 'none'))));
    await expect.poll(() => got.length).toBeGreaterThan(0);
    stop();
    expect(got.at(-1)).toBe(await store.revision());
  });

  it('watch from a known revision reports a change made before its first poll', async () => {
    const since = await store.revision();
    await store.applyBatch('0.0.18', batchOf(toMessages(packed(signals.slice(0, 1), 'none'))));
    const got: number[] = [];
    const stop = store.watch((r) => got.push(r), { intervalMs: 20, since });
    await expect.poll(() => got.length).toBeGreaterThan(0);
    stop();
    expect(got[0]).toBe(await store.revision());
  });

  it('changesSince names exactly the subjects a batch marked dirty and a rescoring rescored, per revision', async () => {
    const topic = '0.0.21';
    while ((await store.rescoreDirty({ now: NOW })).more);
    const start = await store.revision();
    expect(await store.changesSince(start, 100)).toEqual([]);
    const some = signals.slice(0, 6);
    const subjects = [...new Set(some.map((s) => s.subject))];
    const applied = await store.applyBatch(topic, batchOf(toMessages(packed(some, 'none'))));
    const byBatch = await store.changesSince(start, 100);
    expect(new Set(byBatch!.map((c) => `${c.topic} ${c.subject}`))).toEqual(
      new Set(subjects.map((s) => `${topic} ${s}`)),
    );
    // Marked dirty by newer signals, not rescored yet.
    expect(byBatch!.every((c) => !c.rescored)).toBe(true);
    while ((await store.rescoreDirty({ now: NOW })).more);
    const scored = await store.revision();
    expect(scored).toBeGreaterThan(applied.revision);
    // After the batch's revision: only what the rescoring changed (the same subjects, now scored).
    const byRescoring = (await store.changesSince(applied.revision, 100))!;
    expect(new Set(byRescoring.map((c) => c.subject))).toEqual(new Set(subjects));
    expect(byRescoring.every((c) => c.rescored)).toBe(true);
    expect(await store.changesSince(scored, 100)).toEqual([]);
    // More than the limit: null (the caller drops every cached answer instead).
    if (subjects.length > 1) expect(await store.changesSince(start, subjects.length - 1)).toBeNull();
  });

  it('a subject that several batches touch before its rescoring is rescored once, from all of them', async () => {
    const topic = '0.0.26';
    // Every other signal in the first batch, the rest in the second: each subject has signals in both.
    const twelve = signals.slice(0, 12);
    const some = toMessages(
      packed([...twelve.filter((_, i) => i % 2 === 0), ...twelve.filter((_, i) => i % 2 === 1)], 'none'),
    );
    await store.applyBatch(topic, batchOf(some.slice(0, 6)));
    await store.applyBatch(topic, batchOf(some.slice(6)));
    const subjects = new Set(twelve.map((s) => s.subject));
    expect(subjects.size).toBeLessThan(6);
    let rescored = 0;
    for (let more = true; more; ) {
      const r = await store.rescoreDirty({ limit: 1, now: NOW });
      rescored += r.subjects;
      more = r.more;
    }
    expect(rescored).toBe(subjects.size);
    for (const subject of subjects) expect(await store.subjectScore(subject, { topic })).toMatchObject({ fresh: true });
  });

  it('an answer changes only at a revision changesSince names, also when a round takes part of a batch', async () => {
    // What keeps a score cache exact: a cached answer is dropped only when changesSince names its subject.
    const topic = '0.0.25';
    while ((await store.rescoreDirty({ now: NOW })).more);
    const some = signals.slice(0, 9);
    const subjects = [...new Set(some.map((s) => s.subject))];
    expect(subjects.length).toBeGreaterThan(2);
    await store.applyBatch(topic, batchOf(toMessages(packed(some, 'none'))));
    const answers = async () => Promise.all(subjects.map((s) => store.subjectScore(s, { topic })));
    let revision = await store.revision();
    let before = await answers();
    for (let more = true; more; ) {
      more = (await store.rescoreDirty({ limit: 1, now: NOW })).more;
      const after = await answers();
      const named = new Set((await store.changesSince(revision, 100))!.map((c) => c.subject));
      const changed = subjects.filter((_, i) => JSON.stringify(after[i]) !== JSON.stringify(before[i]));
      expect(changed.filter((s) => !named.has(s))).toEqual([]);
      revision = await store.revision();
      before = after;
    }
    // A subject rescored from every stored signal of it is fresh, though others of its batch still wait.
    expect(before.every((a) => a?.fresh === true && a.score !== null)).toBe(true);
  });

  it('useAllowList: a topic indexed under another publisher allow-list starts again, its answers dropped from caches', async () => {
    const topic = '0.0.23';
    expect(await store.useAllowList(topic, null)).toBe(false);
    const messages = toMessages(packed(signals));
    await store.applyBatch(topic, batchOf(messages));
    while ((await store.rescoreDirty({ now: NOW })).more);
    const subject = signals[0]!.subject;
    const before = await store.subjectScore(subject, { topic });
    expect(before?.score).not.toBeNull();
    expect(await store.useAllowList(topic, [])).toBe(false); // empty is no list, as null
    const revision = await store.revision();
    expect(await store.useAllowList(topic, [PAYER, PAYER])).toBe(true);
    expect(await store.cursor(topic)).toBeNull();
    // Known and waiting for its score (503 SCORE_PENDING) until it is rescored: then it has no signal left, and no score.
    expect(await store.subjectScore(subject, { topic })).toMatchObject({ score: null });
    expect(await store.changesSince(revision, 10_000)).toContainEqual(expect.objectContaining({ topic, subject }));
    const status = (await store.topics()).find((t) => t.topic === topic)!;
    expect(status).toMatchObject({ lastSequence: 0, counts: { signals: 0 } });
    expect(status.note).toMatch(/publisher allow-list changed/);
    expect((await store.listSubjects({ topic })).items).toEqual([]);
    while ((await store.rescoreDirty({ now: NOW })).more);
    expect(await store.subjectScore(subject, { topic })).toBeNull();
    // The same list again changes nothing; indexed again, the topic scores as before.
    expect(await store.useAllowList(topic, [PAYER])).toBe(false);
    await store.applyBatch(topic, batchOf(messages));
    while ((await store.rescoreDirty({ now: NOW })).more);
    expect(await store.subjectScore(subject, { topic })).toEqual(before);
  });

  it('markStale puts back at most `limit` subjects per call, so a rescoring round never reads more', async () => {
    const topic = '0.0.24';
    const messages = toMessages(packed(signals));
    const read = await collectTopicSignalsOf(messages);
    const { early, later } = scoringTimes(read);
    await store.applyBatch(topic, batchOf(messages));
    while ((await store.rescoreDirty({ now: early })).more);
    const calls: number[] = [];
    for (
      let n = await store.markStale({ now: later, limit: 3 });
      n > 0;
      n = await store.markStale({ now: later, limit: 3 })
    ) {
      calls.push(n);
      // The next round takes exactly what that call put back: the dirty row holds no more than a round.
      expect(await store.rescoreDirty({ now: later, limit: 3 })).toEqual({ subjects: n, more: false });
    }
    expect(calls.length).toBeGreaterThan(1);
    expect(calls.every((n) => n <= 3)).toBe(true);
    // Every subject ends rescored as `hcs25 scores` would at that time.
    for (const expected of computeScores(read, DEFAULT_SCORING_CONFIG, { now: later, topic }).subjects) {
      expect(await store.subjectScore(expected.subject, { topic })).toEqual({
        topic,
        subject: expected.subject,
        fresh: true,
        score: expected,
        identity: expect.any(Object),
      });
    }
  });

  // Last in this block: it rescores every topic of the store at a later time.
  it('rescores a subject whose component turned stale with time alone, as hcs25 scores would at that time', async () => {
    const topic = '0.0.22';
    const messages = toMessages(packed(signals));
    const read = await collectTopicSignalsOf(messages);
    const subject = read[0]!.message.subject;
    const { early, later } = scoringTimes(read);
    await store.applyBatch(topic, batchOf(messages));
    while ((await store.rescoreDirty({ now: early })).more);
    expect(await store.markStale({ now: early })).toBe(0);
    expect(await store.markStale({ now: later })).toBeGreaterThan(0);
    while ((await store.rescoreDirty({ now: later })).more);
    const expected = computeScores(read, DEFAULT_SCORING_CONFIG, { now: later, topic }).subjects.find(
      (x) => x.subject === subject,
    )!;
    expect(Object.values(expected.components).some((c) => c.status === 'stale')).toBe(true);
    expect(await store.subjectScore(subject, { topic })).toEqual({
      topic,
      subject,
      fresh: true,
      score: expected,
      identity: expect.any(Object),
    });
    // Each subject once: nothing is due again until a new signal makes a component ok again.
    expect(await store.markStale({ now: later })).toBe(0);
  });
});

describe('PGlite, the sole writer: periodic questions cost no query while nothing was written', () => {
  it('rescoreDirty, markStale and the revision watch ask the database again only after a write', async () => {
    const { PGlite } = await import('@electric-sql/pglite');
    const db = await PGlite.create();
    let queries = 0;
    const executor = (q: Parameters<typeof pgliteExecutor>[0]): SqlExecutor => {
      const inner = pgliteExecutor(q);
      return {
        query: (text, params) => {
          queries++;
          return inner.query(text, params);
        },
        exec: (text) => {
          queries++;
          return inner.exec(text);
        },
        copyFrom: (sql, data) => {
          queries++;
          return inner.copyFrom(sql, data);
        },
      };
    };
    const store = createSqlStore({
      engine: 'pglite',
      driver: {
        ...executor(db),
        transaction: (fn) => db.transaction((tx) => fn(executor(tx))),
        close: () => db.close(),
      },
      tryIndexerLock: async () => true,
      soleWriter: true,
    });
    try {
      await store.migrate();
      const topic = '0.0.40';
      const messages = toMessages(packed(signals.slice(0, 20), 'none'));
      const read = await collectTopicSignalsOf(messages);
      const { early, later } = scoringTimes(read);
      const revisions: number[] = [];
      const unwatch = store.watch((r) => revisions.push(r), { intervalMs: 5 });
      await store.applyBatch(topic, batchOf(messages.slice(0, 10)));
      while ((await store.rescoreDirty({ now: early })).more);
      await expect.poll(() => revisions.at(-1)).toBe(await store.revision());
      expect(await store.rescoreDirty({ now: early })).toEqual({ subjects: 0, more: false });
      expect(await store.markStale({ now: early })).toBe(0);

      const idle = queries;
      for (let i = 0; i < 5; i++) {
        expect(await store.rescoreDirty({ now: early })).toEqual({ subjects: 0, more: false });
        expect(await store.markStale({ now: early })).toBe(0);
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(queries).toBe(idle);

      // A write: each question is asked again, and finds it.
      const seen = revisions.length;
      await store.applyBatch(topic, batchOf(messages.slice(10)));
      await expect.poll(() => revisions.length).toBeGreaterThan(seen);
      expect((await store.rescoreDirty({ now: early })).subjects).toBeGreaterThan(0);
      while ((await store.rescoreDirty({ now: early })).more);
      // Time alone: the earliest stale_at is known, so a later `now` asks again.
      expect(await store.markStale({ now: later })).toBeGreaterThan(0);
      expect(queries).toBeGreaterThan(idle);
      unwatch();
    } finally {
      await store.close();
    }
  });
});

describe('PGlite persisted to a directory', () => {
  it('keeps the data and the cursor across reopen', async () => {
    const dir = join(stateDir, 'persist');
    const store = await openStore(undefined, { stateDir: dir });
    await store.applyBatch('0.0.20', batchOf(toMessages(packed(signals.slice(0, 9)))));
    const cursor = await store.cursor('0.0.20');
    // One process per directory: a second open while it is open is refused.
    await expect(openStore(undefined, { stateDir: dir })).rejects.toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
    await store.close();
    const again = await openStore(undefined, { stateDir: dir });
    expect(await again.cursor('0.0.20')).toEqual(cursor);
    expect((await again.topics())[0]!.counts.signals).toBe(9);
    await again.close();
  }, 120_000);

  it('refuses a database URL of another kind, and says why a directory cannot be used', async () => {
    await expect(openStore('mysql://me:s3cret@db.example.com/x', { stateDir })).rejects.toMatchObject({
      code: 'USAGE',
      message: '--database must be postgres://…, memory:// or a directory, got "mysql://db.example.com/x"',
    });
    const file = join(stateDir, 'a-file');
    writeFileSync(file, '');
    await expect(openStore(join(file, 'db'), { stateDir })).rejects.toMatchObject({
      code: 'DATABASE_UNAVAILABLE',
      message: expect.stringMatching(/^cannot open the embedded database in .*a-file\/db: ENOTDIR/),
    });
  });
});

describe('PostgreSQL', () => {
  it('the advisory lock: one of two instances indexes; it passes on when the holder closes', async () => {
    const url = await postgres().database('locks');
    const a = await openStore(url, { stateDir });
    const b = await openStore(url, { stateDir });
    expect(await a.tryIndexerLock()).toBe(true);
    expect(await a.tryIndexerLock()).toBe(true);
    expect(await b.tryIndexerLock()).toBe(false);
    await a.close();
    await expect.poll(() => b.tryIndexerLock()).toBe(true);
    await b.close();
  });

  it('migrates once when instances start at once', async () => {
    const url = await postgres().database('race');
    const stores = await Promise.all([
      openStore(url, { stateDir }),
      openStore(url, { stateDir }),
      openStore(url, { stateDir }),
    ]);
    for (const s of stores) await s.close();
  });

  it('a database written by migration 001 keeps its subjects to rescore (dirty_subjects → dirty_batches in 002)', async () => {
    const url = await postgres().database('from001');
    const { default: pgm } = await import('pg');
    const c = new pgm.Client({ connectionString: url });
    await c.connect();
    const first = migrations()[0]!;
    expect(first.id).toBe('001_init');
    await c.query(
      'CREATE TABLE schema_migrations (id text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    await c.query(first.sql);
    await c.query('INSERT INTO schema_migrations (id) VALUES ($1)', [first.id]);
    // What 001's indexer left: a stored signal whose subject was still waiting for its score.
    const [signal] = batchOf(toMessages(packed(signals.slice(0, 1), 'none'))).signals;
    const subject = signal!.message.subject;
    const hash32 = (v: string) => createHash('md5').update(v).digest().readInt32BE(0);
    await c.query("INSERT INTO topics (topic, last_sequence, signals) VALUES ('0.0.30', 1, 1)");
    await c.query(
      `INSERT INTO signals (tid, seq, idx, sh, rh, consensus, payer, dedupe, message)
       VALUES (1, 1, 0, $1, $2, $3, $4, gen_random_uuid(), $5::json)`,
      [
        hash32(subject),
        hash32(signal!.message.run),
        signal!.consensusTimestamp,
        signal!.payerAccountId,
        JSON.stringify(signal!.message),
      ],
    );
    await c.query('INSERT INTO dirty_subjects (tid, subject, mark) VALUES (1, $1, 1)', [subject]);
    await c.end();

    const store = await openStore(url, { stateDir });
    expect(await store.subjectScore(subject, { topic: '0.0.30' })).toMatchObject({ fresh: false, score: null });
    expect(await store.rescoreDirty({ now: NOW })).toEqual({ subjects: 1, more: false });
    const expected = computeScores([signal!], DEFAULT_SCORING_CONFIG, { now: NOW, topic: '0.0.30' }).subjects[0];
    expect(await store.subjectScore(subject, { topic: '0.0.30' })).toEqual({
      topic: '0.0.30',
      subject,
      fresh: true,
      score: expected,
      identity: expect.any(Object),
    });
    await store.close();
  });

  it('scores stored before migration 004 are rescored once, which gives them their stale_at', async () => {
    const url = await postgres().database('before004');
    const store = await openStore(url, { stateDir });
    const messages = toMessages(packed(signals.slice(0, 9)));
    const read = await collectTopicSignalsOf(messages);
    const { early, later } = scoringTimes(read);
    await store.applyBatch('0.0.31', batchOf(messages));
    while ((await store.rescoreDirty({ now: early })).more);
    await store.close();
    // The database as 003 left it.
    const { default: pgm } = await import('pg');
    const c = new pgm.Client({ connectionString: url });
    await c.connect();
    await c.query('ALTER TABLE subject_scores DROP COLUMN stale_at');
    await c.query("DELETE FROM schema_migrations WHERE id = '004_stale_at'");
    await beforePendingSubjects(c);
    await c.end();
    const again = await openStore(url, { stateDir });
    // Still answered as fresh (no signal is missing from it) while it waits for its rescoring.
    expect(await again.subjectScore(read[0]!.message.subject, { topic: '0.0.31' })).toMatchObject({ fresh: true });
    expect(await again.markStale({ now: later })).toBe(0);
    expect((await again.rescoreDirty({ now: early })).subjects).toBeGreaterThan(0);
    expect(await again.markStale({ now: later })).toBeGreaterThan(0);
    await again.close();
  });

  it('scores stored before migration 007 are rescored once, which gives them their evidence and its ranking', async () => {
    const url = await postgres().database('before007');
    const store = await openStore(url, { stateDir });
    const topic = '0.0.41';
    await store.applyBatch(topic, batchOf(toMessages(packed(evidenceFleet(), 'none'))));
    while ((await store.rescoreDirty({ now: NOW })).more);
    await store.close();
    // The database as 006 left it: no evidence columns, and scores without evidenceStrength.
    const { default: pgm } = await import('pg');
    const c = new pgm.Client({ connectionString: url });
    await c.connect();
    await c.query(
      'ALTER TABLE subject_scores DROP COLUMN eval_observations, DROP COLUMN basis, DROP COLUMN low_evidence',
    );
    await c.query(
      "UPDATE subject_scores SET score = (score::jsonb - 'evidenceStrength')::json, total = 100 WHERE score IS NOT NULL",
    );
    await c.query("DELETE FROM schema_migrations WHERE id = '007_evidence_strength'");
    await beforePendingSubjects(c);
    await c.end();
    const again = await openStore(url, { stateDir });
    const first = async () => (await again.listSubjects({ topic }, { limit: 1 })).items[0]!;
    // Still answered as fresh while it waits for its rescoring, ranked by subject alone.
    expect(await first()).toMatchObject({
      score: expect.not.objectContaining({ evidenceStrength: expect.anything() }),
    });
    expect(nativeIdOf((await first()).subject)).toBe('m-thin.example');
    expect((await again.subjectScore((await first()).subject, { topic }))!.fresh).toBe(true);
    while ((await again.rescoreDirty({ now: NOW })).more);
    expect(nativeIdOf((await first()).subject)).toBe('z-well.example');
    expect((await first()).score.evidenceStrength).toMatchObject({ basis: 'evals', evalObservations: 20 });
    await again.close();
  });

  it('an unreachable server is DATABASE_UNAVAILABLE, and the message never shows the password', async () => {
    const err = await openPostgresStore('postgres://user:s3cret@127.0.0.1:1/db').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
    expect(String((err as Error).message)).not.toContain('s3cret');
    expect((err as Error).message).toContain('postgres://127.0.0.1:1/db');
  });
});

/**
 * Four subjects scoring 100: an agent with 10 answers to each eval, one with a single answer to each, and two MCP
 * servers with probes only (evals do not apply to MCP). Each signal is its own run (one signal per run and id).
 */
/** A database as migrations before 011 left it: subjects to rescore in batch rows (nothing waits here). */
async function beforePendingSubjects(c: { query(sql: string): Promise<unknown> }): Promise<void> {
  await c.query('DROP TABLE pending_subjects');
  await c.query(
    `CREATE TABLE dirty_batches (id bigserial PRIMARY KEY, tid int NOT NULL, after_seq bigint NOT NULL,
       subjects text[] NOT NULL, rev bigint NOT NULL DEFAULT 0)`,
  );
  await c.query("DELETE FROM schema_migrations WHERE id = '011_pending_subjects'");
}

function evidenceFleet(): SignalMessageV2[] {
  const out: SignalMessageV2[] = [];
  let seq = 1;
  const add = (subject: string, kind: 'math' | 'science' | 'probe', count: number) => {
    for (let i = 0; i < count; i++) {
      const s = signalV2(subject, kind, kind === 'probe' ? 'reachable' : 'correct', {
        seq,
        at: T0 + seq * 1000,
        run: seq,
      });
      out.push(s.message as SignalMessageV2);
      seq++;
    }
  };
  for (const [name, proto, answers] of [
    ['z-well.example', 'a2a', 10],
    ['m-thin.example', 'a2a', 1],
    ['a-mcp.example', 'mcp', 0],
    ['b-mcp.example', 'mcp', 0],
  ] as const) {
    const subject = uaid(name, proto);
    add(subject, 'probe', 10);
    add(subject, 'math', answers);
    add(subject, 'science', answers);
  }
  return out;
}

function nativeIdOf(subject: string): string {
  return subject.slice(subject.indexOf(';nativeId=') + ';nativeId='.length);
}

/** The signals `hcs25 signals` reads from these messages (the reader over a mock mirror). */
async function collectTopicSignalsOf(messages: ReturnType<typeof toMessages>) {
  const mirror = {
    async *topicMessages() {
      yield* messages;
    },
    async close() {},
  };
  const out = await collectTopicSignals({ topic: '0.0.14', mirror: mirror as never });
  return out.signals;
}

/** An hour after the newest observation of `read` (every component ok), and 4 days after it (past the 72 h window). */
function scoringTimes(read: Parameters<typeof computeScores>[0]): { early: Date; later: Date } {
  const newest = Math.max(
    ...computeScores(read, DEFAULT_SCORING_CONFIG, { now: NOW })
      .subjects.flatMap((x) => Object.values(x.components).map((c) => Date.parse(c.newestAt ?? '')))
      .filter(Number.isFinite),
  );
  return { early: new Date(newest + 3_600_000), later: new Date(newest + 4 * 86_400_000) };
}
