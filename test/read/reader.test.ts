import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { consensusIso, consensusMs } from '../../src/core/consensus-time.js';
import { collectTopicSignals, readTopic, type SeenSignals } from '../../src/read/reader.js';
import type { TopicEvent } from '../../src/read/types.js';
import { FakeMirror } from '../discover/fake-mirror.js';
import { evalSignal, probe, uaid } from '../support/signals.js';
import { buildSignalV2, buildRevealMessageV2 } from '../../src/format/write.js';
import { SignalPacker, packBody } from '../../src/format/pack.js';
import type { SignalMessageV2 } from '../../src/format/schema-v2.js';
import { RUN as RUN_V2, RUN_KEY, probeResult } from '../format/fixtures.js';
import { fleetResults, fleetSignals } from '../format/fleet.js';
import { emptyUnknownCounts } from '../../src/format/read.js';
import { SignalPackerV3, signalUnitV3 } from '../../src/format/pack-v3.js';
import { buildSignalV3 } from '../../src/format/write-v3.js';

const PUBLISHER = '0.0.1001';
const FORGER = '0.0.666';
const A = uaid('calc.example.com');
const B = uaid('files.mcp.dev', 'mcp');

let fake: FakeMirror;
let mirror: MirrorRestClient;

beforeAll(async () => {
  fake = await new FakeMirror().start();
  mirror = new MirrorRestClient({ baseUrl: fake.url, retries: 0 });
});
afterAll(async () => {
  await mirror.close();
  await fake.stop();
});

const msg = (s: ReturnType<typeof probe>) => JSON.stringify(s.message);

/** A topic holding everything a hostile writer can put on a public topic, around three good signals. */
function hostileTopic(): string {
  const topic = fake.createTopic('hcs-25:0:86400');
  const good = probe(A, { seq: 1, at: Date.now(), run: 1 });
  fake.submit(topic, msg(good), { payer: PUBLISHER }); // 1 ok
  fake.submit(topic, 'not json at all', { payer: PUBLISHER }); // 2 bad-json
  fake.submit(topic, msg(good), { payer: FORGER }); // 3 publisher-not-allowed (same content, other payer)
  fake.submit(topic, JSON.stringify({ ...good.message, data: { ...good.message.data, pad: 'x'.repeat(1200) } }), {
    payer: PUBLISHER,
  }); // 4-5 too-large (2 chunks)
  fake.submit(topic, JSON.stringify({ ...good.message, v: 3 }), { payer: PUBLISHER }); // 6 unknown version: counted
  fake.submit(topic, Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), { payer: PUBLISHER }); // 7 not-utf8
  fake.submit(topic, JSON.stringify({ ...good.message, status: 'Great!' }), { payer: PUBLISHER }); // 8 schema (not a token)
  fake.submit(topic, JSON.stringify({ p: 'hcs-2', op: 'register' }), { payer: PUBLISHER }); // 9 not-hcs25
  fake.submit(
    topic,
    JSON.stringify({
      p: 'hcs-25',
      op: 'score',
      v: 1,
      subject: A,
      trustScores: { total: 99 },
      trustScoreConfigVersion: 1,
      trustScoreUpdatedAt: '2026-11-21T10:00:00.000Z',
    }),
    { payer: PUBLISHER },
  ); // 10 a score record
  fake.submit(topic, msg(good), { payer: PUBLISHER }); // 11 duplicate
  fake.submit(topic, msg(evalSignal(A, 'math', 'correct', { seq: 2, at: Date.now(), run: 1 })), { payer: PUBLISHER }); // 12 ok
  fake.push(fake.topic(topic), topic, Buffer.from('{"p":"hcs-25",'), PUBLISHER, {
    initial_transaction_id: {
      account_id: PUBLISHER,
      nonce: 0,
      scheduled: false,
      transaction_valid_start: '1700000000.000000001',
    },
    number: 1,
    total: 2,
  }); // 13 incomplete-chunks
  fake.submit(topic, msg(probe(B, { seq: 3, at: Date.now(), run: 1 })), { payer: PUBLISHER }); // 14 ok
  return topic;
}

describe('readSignals', () => {
  it('a hostile topic produces reasons, never a crash, and only genuine signals', async () => {
    const topic = hostileTopic();
    const { signals, rejected, records, unknown, lastSequence } = await collectTopicSignals({
      topic,
      mirror,
      publishers: [PUBLISHER],
    });
    expect(signals.map((s) => [s.sequenceNumber, s.message.signal, s.payerAccountId])).toEqual([
      [1, 'availability.probe', PUBLISHER],
      [12, 'simple-evals.math', PUBLISHER],
      [14, 'availability.probe', PUBLISHER],
    ]);
    expect(rejected.map((r) => [r.sequenceNumber, r.reason])).toEqual([
      [2, 'bad-json'],
      [3, 'publisher-not-allowed'],
      [5, 'too-large'],
      [7, 'not-utf8'],
      [8, 'schema'],
      [9, 'not-hcs25'],
      [11, 'duplicate'],
      [13, 'incomplete-chunks'],
    ]);
    // Another version and a score record are not errors: counted and returned.
    expect(unknown).toEqual({ ...emptyUnknownCounts(), version: { '3': 1 } });
    expect(records.map((r) => [r.sequenceNumber, r.kind, r.v, r.validated])).toEqual([[10, 'score', 1, true]]);
    expect(rejected.find((r) => r.reason === 'duplicate')!.detail).toContain('sequence 1');
    for (const r of rejected) expect(r.detail.length).toBeLessThanOrEqual(160);
    expect(lastSequence).toBe(14);
    expect(signals[0]!.consensusAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    // The parsed time comes along, so scoring does not parse the text again.
    expect(signals.map((s) => s.consensusMs)).toEqual(signals.map((s) => consensusMs(s.consensusTimestamp)));
  });

  it('a compact read hands each signal to its sink instead of yielding it, with the same origin; the rest is yielded alike', async () => {
    const topic = hostileTopic();
    const events: TopicEvent[] = [];
    for await (const e of readTopic({ topic, mirror, publishers: [PUBLISHER] })) events.push(e);
    const handed: Array<{ message: unknown; sequenceNumber: number; ms: number; payer: string }> = [];
    const others: TopicEvent[] = [];
    const into = {
      addSignal: (message: unknown, sequenceNumber: number, ms: number, payer: string) =>
        void handed.push({ message, sequenceNumber, ms, payer }),
    };
    for await (const e of readTopic({ topic, mirror, publishers: [PUBLISHER], into })) others.push(e);
    const signals = events.flatMap((e) => (e.type === 'signal' ? [e.signal] : []));
    expect(signals).toHaveLength(3);
    expect(handed).toEqual(
      signals.map((s) => ({
        message: s.message,
        sequenceNumber: s.sequenceNumber,
        ms: Date.parse(s.consensusAt),
        payer: s.payerAccountId,
      })),
    );
    // Rejections (the duplicate too), the score record with its time and the unknown version: as before.
    expect(others).toEqual(events.filter((e) => e.type !== 'signal'));
    expect(others.some((e) => e.type === 'record')).toBe(true);

    const subjects: string[] = [];
    for await (const e of readTopic({
      topic,
      mirror,
      publishers: [PUBLISHER],
      subject: B,
      into: { addSignal: (m) => void subjects.push(m.subject) },
    }))
      expect(e.type).not.toBe('signal');
    expect(subjects).toEqual([B]);
  });

  it('without an allow-list every payer is accepted; the dedupe key includes the payer', async () => {
    const topic = hostileTopic();
    const { signals, rejected } = await collectTopicSignals({ topic, mirror: fake.url });
    expect(signals.map((s) => s.sequenceNumber)).toEqual([1, 3, 12, 14]);
    expect(rejected.map((r) => r.reason)).not.toContain('publisher-not-allowed');
  });

  it('filters by subject and consensus time, and resumes after a sequence number keeping first-wins', async () => {
    const topic = hostileTopic();
    const bySubject = await collectTopicSignals({ topic, mirror, publishers: [PUBLISHER], subject: B });
    expect(bySubject.signals.map((s) => s.sequenceNumber)).toEqual([14]);

    const all = fake.topic(topic).messages;
    const since = all[11]!.consensus_timestamp; // seq 12
    const windowed = await collectTopicSignals({
      topic,
      mirror,
      publishers: [PUBLISHER],
      since,
      until: all[12]!.consensus_timestamp,
    });
    expect(windowed.signals.map((s) => s.sequenceNumber)).toEqual([12]);
    // The time window is asked of the mirror node, not just applied to the whole history.
    const windowRequest = fake.requests.findLast((r) => r.includes(`/topics/${topic}/messages`)) ?? '';
    expect(decodeURIComponent(windowRequest)).toContain(`timestamp=gte:${since}`);
    // Reading stopped at `until`: the open chunk group (13) may still complete, so it is not reported.
    expect(windowed.rejected).toEqual([]);

    const seen: SeenSignals = new Map();
    const first = await collectTopicSignals({
      topic,
      mirror,
      publishers: [PUBLISHER],
      seen,
      until: all[9]!.consensus_timestamp,
    });
    expect(first.signals.map((s) => s.sequenceNumber)).toEqual([1]);
    const resumed = await collectTopicSignals({
      topic,
      mirror,
      publishers: [PUBLISHER],
      seen,
      afterSequence: first.lastSequence,
    });
    expect(resumed.signals.map((s) => s.sequenceNumber)).toEqual([12, 14]);
    expect(resumed.rejected.find((r) => r.sequenceNumber === 11)?.reason).toBe('duplicate');
  });

  it('follows the topic: new messages arrive after the end is reached, until aborted', async () => {
    const topic = fake.createTopic('hcs-25:0:86400');
    fake.submit(topic, msg(probe(A, { seq: 1, at: Date.now(), run: 1 })), { payer: PUBLISHER });
    const abort = new AbortController();
    const events: TopicEvent[] = [];
    const reading = (async () => {
      for await (const e of readTopic({
        topic,
        mirror,
        follow: { minIntervalMs: 20, maxIntervalMs: 40 },
        signal: abort.signal,
      })) {
        events.push(e);
        if (events.length === 1)
          fake.submit(topic, msg(probe(A, { seq: 2, at: Date.now(), run: 2 })), { payer: PUBLISHER });
        if (events.length === 2) abort.abort();
      }
    })();
    await reading;
    expect(events.map((e) => (e.type === 'signal' ? e.signal.sequenceNumber : -1))).toEqual([1, 2]);
  });

  it('a topic mixing v1, v2 with extra fields, packs, unknown ids and ops: all counted, none rejected, known ones read', async () => {
    const topic = fake.createTopic('hcs-25:0:86400');
    const run = RUN_V2;
    const v1 = probe(A, { seq: 1, at: Date.now(), run: 1 }).message;
    const v2 = buildSignalV2(probeResult(), { run, runKey: RUN_KEY }).message;
    const [m0, m1, m2, m3, m4, m5] = fleetSignals(2);
    const packer = new SignalPacker({ mode: 'dense' });
    const dense = [...[m0!, m1!, m2!, m3!].flatMap((x) => packer.add(x)), ...packer.flush()];
    const subjectPack = new SignalPacker({ mode: 'subject' });
    const bySubject = [m4!, m5!].flatMap((x) => subjectPack.add(x)).concat(subjectPack.flush());
    const submit = (body: string | Buffer) => fake.submit(topic, body, { payer: PUBLISHER });
    submit(JSON.stringify({ ...v1, note: 'extra', data: { ...v1.data, extra: [1] } })); // 1 v1 with extra fields: read
    submit(JSON.stringify({ ...v2, future: { x: 1 }, data: { ...v2.data, jitterMs: 3 } })); // 2 v2 with extra fields: read
    submit(JSON.stringify({ ...v2, signal: 'reputation.stars' })); // 3 unknown signal id
    submit(JSON.stringify({ ...v1, signal: 'simple-evals.poetry' })); // 4 unknown v1 signal id
    submit(JSON.stringify({ p: 'hcs-25', op: 'vote', v: 2, subject: A })); // 5 unknown op
    submit(JSON.stringify({ p: 'hcs-25', op: 'signal', v: 7, anything: true })); // 6 unknown version
    const reveal = buildRevealMessageV2({
      run,
      key: RUN_KEY.toString('base64url'),
      seed: 'seed',
      generator: 'hcs25-questions@1',
      grader: 'first-token@1',
    }).message;
    submit(JSON.stringify({ ...reveal, salt: 's' })); // 7 v2 reveal with an extra field: validated, extra kept
    for (const m of dense) submit(m.bytes); // 8 dense pack (zlib)
    for (const m of bySubject) submit(m.bytes); // 9 subject pack
    submit(JSON.stringify({ ...v2, status: 'Great!' })); // 10 malformed v2 (status not a token): the only rejection
    expect(dense).toHaveLength(1);
    expect(bySubject).toHaveLength(1);

    const { signals, rejected, records, unknown } = await collectTopicSignals({
      topic,
      mirror,
      publishers: [PUBLISHER],
    });
    expect(signals.map((s) => [s.sequenceNumber, s.index, s.message.v, s.message.signal])).toEqual([
      [1, 0, 1, 'availability.probe'],
      [2, 0, 2, 'availability.probe'],
      [8, 0, 2, 'availability.probe'],
      [8, 1, 2, 'simple-evals.a2a_math'],
      [8, 2, 2, 'simple-evals.a2a_science'],
      [8, 3, 2, 'availability.probe'],
      [9, 0, 2, 'simple-evals.a2a_math'],
      [9, 1, 2, 'simple-evals.a2a_science'],
    ]);
    expect(signals[1]!.message).toMatchObject({ future: { x: 1 }, data: { jitterMs: 3 } });
    expect(signals.slice(2).map((s) => s.message)).toEqual([m0, m1, m2, m3, m4, m5]);
    expect(unknown).toEqual({
      ...emptyUnknownCounts(),
      version: { '7': 1 },
      op: { vote: 1 },
      signal: { 'reputation.stars': 1, 'simple-evals.poetry': 1 },
      value: {},
      field: { note: 1, 'data.extra': 1, future: 1, 'data.jitterMs': 1, salt: 1 },
    });
    expect(records.map((r) => [r.sequenceNumber, r.kind, r.validated])).toEqual([[7, 'reveal', true]]);
    expect(records[0]!.message).toMatchObject({ salt: 's', seed: 'seed' });
    expect(rejected.map((r) => [r.sequenceNumber, r.reason])).toEqual([[10, 'schema']]);

    // A pack repeating a signal already read: that one signal is the duplicate, named by its index.
    submit(dense[0]!.bytes);
    const again = await collectTopicSignals({ topic, mirror, publishers: [PUBLISHER] });
    expect(again.rejected.filter((r) => r.reason === 'duplicate').map((r) => [r.sequenceNumber, r.index])).toEqual([
      [11, 0],
      [11, 1],
      [11, 2],
      [11, 3],
    ]);
  });

  it('tells a resend (duplicate) from a copy with other content (conflict: equivocation), alone or packed', async () => {
    const topic = fake.createTopic('hcs-25:0:86400');
    const [m0, m1] = fleetSignals(1);
    const submit = (body: string | Buffer, payer = PUBLISHER) => fake.submit(topic, body, { payer });
    submit(JSON.stringify(m0)); // 1 read
    // 2: the same signal with its keys in another order: the same content.
    submit(JSON.stringify(Object.fromEntries(Object.entries(m0!).reverse())));
    // 3: the same signal saying another answer: the publisher contradicts itself.
    submit(JSON.stringify({ ...m0, data: { ...m0!.data, answer: '1' } }));
    // 4: the same conflicting copy from another payer: another publisher's first copy, read.
    submit(JSON.stringify({ ...m0, data: { ...m0!.data, answer: '1' } }), FORGER);
    submit(JSON.stringify(m1)); // 5 read
    // 6: a pack holding both: m0 as read is a duplicate, m1 with another latency a conflict, by index.
    const packer = new SignalPacker({ mode: 'dense' });
    const m1b = { ...m1!, data: { ...m1!.data, latencyMs: 7 } } as SignalMessageV2;
    const pack = [...[m0!, m1b].flatMap((x) => packer.add(x))];
    pack.push(...packer.flush());
    expect(pack).toHaveLength(1);
    submit(pack[0]!.bytes);
    const { signals, rejected } = await collectTopicSignals({ topic, mirror });
    expect(signals.map((s) => [s.sequenceNumber, s.payerAccountId])).toEqual([
      [1, PUBLISHER],
      [4, FORGER],
      [5, PUBLISHER],
    ]);
    expect(rejected.map((r) => [r.sequenceNumber, r.index, r.reason])).toEqual([
      [2, undefined, 'duplicate'],
      [3, undefined, 'conflict'],
      [6, 0, 'duplicate'],
      [6, 1, 'conflict'],
    ]);
    expect(rejected[1]).toMatchObject({
      payerAccountId: PUBLISHER,
      detail: 'same publisher, run, signal and subject as sequence 1, different content',
      conflict: { run: m0!.run, signal: m0!.signal, subject: m0!.subject, firstSequence: 1 },
    });
    expect(rejected[3]!.conflict).toMatchObject({ signal: m1!.signal, firstSequence: 5 });
    expect(rejected[0]!.conflict).toBeUndefined();
  });

  it('a pack with a malformed signal and values it does not know: the bad one rejected by index, the rest read', async () => {
    const topic = fake.createTopic('hcs-25:0:86400');
    const [m0, m1, m2] = fleetSignals(1);
    const body = structuredClone(packBody([m0!, m1!, m2!]).body);
    body.subjects[0]!.sig[0]!.d = { ...body.subjects[0]!.sig[0]!.d, score: 101 }; // malformed: this signal only
    body.subjects[0]!.sig[1]!.d = { ...body.subjects[0]!.sig[1]!.d, outcome: 'partial', score: 40 }; // read, counted
    body.subjects[0]!.sig[2]!.st = 'paused'; // status unknown: counted, not read
    fake.submit(topic, deflateSync(JSON.stringify(body)), { payer: PUBLISHER });
    fake.submit(topic, deflateSync(JSON.stringify(body)), { payer: PUBLISHER });

    const { signals, rejected, unknown } = await collectTopicSignals({ topic, mirror, publishers: [PUBLISHER] });
    expect(signals.map((s) => [s.sequenceNumber, s.index, s.message.data.score])).toEqual([[1, 1, 40]]);
    expect(rejected.map((r) => [r.sequenceNumber, r.index, r.reason])).toEqual([
      [1, 0, 'schema'],
      [2, 0, 'schema'],
      [2, 1, 'duplicate'],
    ]);
    expect(rejected[0]!.detail).toMatch(/^signal 0: data\.score/);
    expect(unknown.value).toEqual({ 'outcome=partial': 2, 'score=40': 2, 'status=paused': 2 });
  });

  it('rejects an invalid since/until', async () => {
    await expect(collectTopicSignals({ topic: '0.0.1', mirror, since: 'yesterday-ish' })).rejects.toThrow(
      /since is not a time/,
    );
  });
});

describe('consensus timestamps', () => {
  it('are read as milliseconds (nanoseconds truncated) and ISO text; anything else is NaN and empty', () => {
    expect(consensusMs('1763719200.123456789')).toBe(1_763_719_200_123);
    expect(consensusMs('1763719200.5')).toBe(1_763_719_200_500);
    expect(consensusMs('1763719200')).toBe(1_763_719_200_000);
    expect(consensusIso('1763719200.000999999')).toBe('2025-11-21T10:00:00.000Z');
    for (const bad of ['', 'x', '1.', '.5', '-1.0', '1.1234567890', '1763719200.5Z'])
      expect(consensusMs(bad), bad).toBeNaN();
    expect(consensusIso('not a time')).toBe('');
  });

  it('a malformed signal inside a format-3 pack is rejected with its index; the rest of the pack reads', async () => {
    const topic = fake.createTopic('hcs25-tool/3');
    const packer = new SignalPackerV3({ mode: 'json' });
    const units = [0, 1].flatMap((i) =>
      fleetResults(i).map((r) => signalUnitV3(buildSignalV3(r, { run: RUN_V2, runKey: RUN_KEY }).json)),
    );
    const [message] = [...packer.addGroup(units.slice(0, 3)), ...packer.addGroup(units.slice(3)), ...packer.flush()];
    const body = JSON.parse(message!.bytes.toString('utf8'));
    body.subjects[0].sig[2].dt = 'soon';
    fake.submit(topic, JSON.stringify(body), { payer: PUBLISHER });
    const { signals, rejected } = await collectTopicSignals({ topic, mirror, publishers: [PUBLISHER] });
    expect(signals.map((s) => [s.sequenceNumber, s.index, s.message.v])).toEqual([
      [1, 0, 3],
      [1, 1, 3],
      [1, 3, 3],
      [1, 4, 3],
      [1, 5, 3],
    ]);
    expect(rejected).toEqual([expect.objectContaining({ sequenceNumber: 1, index: 2, reason: 'schema' })]);
  });
});
