/**
 * One topic as a consumer may find it years from now: v1 singles, v2 singles and dense packs, format-3 messages (JSON
 * and zlib), and messages with what this version does not know (another format version, an op, a signal id, values
 * and fields). Every known signal is read; everything else is counted; nothing is rejected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignalPacker } from '../../src/format/pack.js';
import { SignalPackerV3, signalUnitV3 } from '../../src/format/pack-v3.js';
import { buildSignalV2 } from '../../src/format/write.js';
import { buildSignalMessage } from '../../src/format/write-v1.js';
import { buildSignalV3 } from '../../src/format/write-v3.js';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { collectTopicSignals } from '../../src/read/reader.js';
import { FakeMirror } from '../discover/fake-mirror.js';
import { RUN_KEY } from '../format/fixtures.js';
import { fleetResults } from '../format/fleet.js';
import { runId } from '../support/signals.js';

const PUBLISHER = '0.0.1001';
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

/** The format-3 messages of `agents` in `mode`, one run. */
function formatThree(mode: 'json' | 'dense', run: string, agents: number[]): Buffer[] {
  const packer = new SignalPackerV3({ mode });
  const out = agents.flatMap((i) =>
    packer.addGroup(fleetResults(i).map((r) => signalUnitV3(buildSignalV3(r, { run, runKey: RUN_KEY }).json))),
  );
  return [...out, ...packer.flush()].map((m) => m.bytes);
}

describe('a topic mixing every format', () => {
  it('reads every known signal and counts the rest', async () => {
    const topic = fake.createTopic('hcs25-tool/3');
    const submit = (body: string | Buffer) => fake.submit(topic, body, { payer: PUBLISHER });
    let known = 0;

    // v1: one signal per message.
    for (const r of fleetResults(0)) submit(buildSignalMessage(r, { run: runId(1), runKey: RUN_KEY }).json);
    known += 3;
    // v2: a single signal, and a dense pack (raw zlib bytes).
    submit(buildSignalV2(fleetResults(1)[0]!, { run: runId(2), runKey: RUN_KEY }).json);
    known += 1;
    const dense = new SignalPacker({ mode: 'dense' });
    const packed = [1, 2].flatMap((i) =>
      fleetResults(i).flatMap((r) => dense.add(buildSignalV2(r, { run: runId(3), runKey: RUN_KEY }).message)),
    );
    for (const m of [...packed, ...dense.flush()]) submit(m.bytes);
    known += 6;
    // Format 3: readable JSON and the zlib wrapper.
    for (const m of formatThree('json', runId(4), [3, 4, 5])) submit(m);
    for (const m of formatThree('dense', runId(5), [3, 4, 5])) submit(m);
    known += 18;
    // Format 3 with values and fields this version does not know: the signals still read, the unknowns counted.
    const [open] = formatThree('json', runId(6), [6]);
    const body = JSON.parse(open!.toString('utf8'));
    body.mood = 'curious';
    body.subjects[0].sig[1] = { ...body.subjects[0].sig[1], score: 40, outcome: 'partial', stars: 3 };
    body.subjects[0].sig[0] = { ...body.subjects[0].sig[0], reason: 'solar-flare' };
    submit(JSON.stringify(body));
    known += 3;
    // What a later version may write: another format version, another op, a signal id not in the catalog, a status.
    submit(JSON.stringify({ fmt: 'hcs25-tool/4', op: 'signals', anything: true }));
    submit(JSON.stringify({ fmt: 'hcs25-tool/3', op: 'vote', for: 'calc' }));
    const [other] = formatThree('json', runId(7), [7]);
    const future = JSON.parse(other!.toString('utf8'));
    future.ids = [...future.ids, 'reputation.stars'];
    future.subjects[0].sig.push({ i: 3, dt: 0, score: 80 });
    future.subjects[0].sig[2].st = 'disputed';
    submit(JSON.stringify(future));
    known += 2;

    const { signals, rejected, unknown } = await collectTopicSignals({ topic, mirror, publishers: [PUBLISHER] });
    expect(rejected).toEqual([]);
    expect(signals).toHaveLength(known);
    expect(new Set(signals.map((s) => s.message.v))).toEqual(new Set([1, 2, 3]));
    expect(unknown.version).toEqual({ '4': 1 });
    expect(unknown.op).toEqual({ vote: 1 });
    expect(unknown.signal).toEqual({ 'reputation.stars': 1 });
    expect(unknown.value).toEqual({
      'outcome=partial': 1,
      'score=40': 1,
      'reason=solar-flare': 1,
      'status=disputed': 1,
    });
    expect(unknown.field).toEqual({ mood: 1, stars: 1 });
    // The signal with values it does not know is read and scored by its status and score.
    expect(signals.find((s) => s.message.run === runId(6) && s.index === 1)!.message.data).toMatchObject({
      outcome: 'partial',
      score: 40,
    });
  });
});
