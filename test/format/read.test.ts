import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  SignalPacker,
  buildRevealMessage,
  buildSignalMessage,
  buildSignalV2,
  packBody,
  readMessage,
  type ReadResult,
} from '../../src/format/index.js';
import { expandPack } from '../../src/format/read-v2.js';
import { signalMessageV2Schema } from '../../src/format/schema-v2.js';
import { RUN, RUN_KEY, evalResult, probeResult } from './fixtures.js';
import { fleetSignals } from './fleet.js';

const v1 = buildSignalMessage(evalResult(), { run: RUN, runKey: RUN_KEY }).message;
const v2 = buildSignalV2(probeResult(), { run: RUN, runKey: RUN_KEY }).message;
const json = (value: unknown) => Buffer.from(JSON.stringify(value));
const zlib = (value: unknown) => deflateSync(json(value));
const items = (r: ReadResult) => (r.ok ? r.items : r);

describe('readMessage', () => {
  it('reads v1 as built, and v1 with extra fields (kept, ignored, counted)', () => {
    expect(items(readMessage(json(v1)))).toEqual([{ kind: 'signal', index: 0, message: v1 }]);
    const extra = { ...v1, memo: 'x', data: { ...v1.data, jitter: 1 } };
    expect(items(readMessage(json(extra)))).toEqual([
      { kind: 'signal', index: 0, message: extra },
      { kind: 'unknown', index: 0, unknown: 'field', name: 'memo' },
      { kind: 'unknown', index: 0, unknown: 'field', name: 'data.jitter' },
    ]);
    expect(readMessage(json(v1).toString('base64'))).toEqual(readMessage(json(v1)));
  });

  it('counts what it does not know instead of rejecting it', () => {
    expect(items(readMessage(json({ ...v2, v: 3 })))).toEqual([
      { kind: 'unknown', index: 0, unknown: 'version', name: '3' },
    ]);
    expect(items(readMessage(json({ ...v2, op: 'vote' })))).toEqual([
      { kind: 'unknown', index: 0, unknown: 'op', name: 'vote' },
    ]);
    expect(items(readMessage(json({ ...v1, op: 'pack' })))).toEqual([
      { kind: 'unknown', index: 0, unknown: 'op', name: 'pack' },
    ]);
    expect(items(readMessage(json({ ...v2, signal: 'reputation.stars', data: 7 })))).toEqual([
      { kind: 'unknown', index: 0, unknown: 'signal', name: 'reputation.stars' },
    ]);
    expect(items(readMessage(json({ ...v1, signal: 'simple-evals.a2a_math' })))).toEqual([
      { kind: 'unknown', index: 0, unknown: 'signal', name: 'simple-evals.a2a_math' },
    ]);
  });

  it('reads score and reveal records, v1 and v2 (a record shaped the way the reference builds it included)', () => {
    const reveal = buildRevealMessage(RUN, RUN_KEY).message;
    expect(items(readMessage(json(reveal)))).toEqual([
      { kind: 'reveal', index: 0, v: 1, message: reveal, validated: true },
    ]);
    const reference = {
      p: 'hcs-25',
      op: 'score',
      v: 2,
      subject: v2.subject,
      trustScore: 50,
      trustScores: { total: 50, 'simple-math.score': 50 },
      trustScoreConfigVersion: 1,
      trustScoreUpdatedAt: '2026-11-21T10:00:00.000Z',
    };
    expect(items(readMessage(json(reference)))).toEqual([
      { kind: 'score', index: 0, v: 2, message: reference, validated: true },
    ]);
    expect(readMessage(json({ ...reveal, key: 'short' }))).toMatchObject({ ok: false, reason: 'schema' });
    expect(readMessage(json({ ...reference, trustScore: 'high' }))).toMatchObject({ ok: false, reason: 'schema' });
  });

  it('reads a pack, counting an unknown signal id inside it at its index', () => {
    const [a, b, c] = fleetSignals(1);
    const body = packBody([a!, b!, c!]).body;
    body.ids[1] = 'reputation.stars';
    const read = items(readMessage(zlib(body)));
    expect(read).toEqual([
      { kind: 'signal', index: 0, message: a },
      { kind: 'unknown', index: 1, unknown: 'signal', name: 'reputation.stars' },
      { kind: 'signal', index: 2, message: c },
    ]);
  });

  it.each([
    ['bad-json', Buffer.from('not json {')],
    ['bad-zlib', Buffer.from('xml? no: any body starting with x (0x78) is read as zlib')],
    ['bad-zlib', Buffer.from([0x78, 0x9c, 1, 2, 3, 4])],
    ['too-large', deflateSync(Buffer.alloc(200_000, 0x20))],
    ['too-large', Buffer.alloc(1025, 0x20)],
    ['not-utf8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
    ['not-hcs25', zlib({ p: 'hcs-2', op: 'register' })],
    ['not-hcs25', json([1])],
    ['schema', json({ ...v2, status: 'Great' })],
    ['schema', json({ ...v2, status: 7 })],
    ['schema', json({ ...v2, data: { ...v2.data, reason: 'not a code' } })],
    ['schema', json({ ...v2, data: { ...v2.data, transport: '' } })],
    ['schema', json({ ...v2, signal: 'Not An Id' })],
    ['schema', json({ ...v2, data: { ...v2.data, score: 100.5 } })],
    ['schema', json({ ...v2, data: { ...v2.data, score: '100' } })],
    ['schema', json({ ...v1, data: { ...v1.data, score: -1 } })],
    ['schema', json({ ...v1, data: { ...v1.data, outcome: 'x'.repeat(49) } })],
  ])('rejects malformed messages only: %s', (reason, bytes) => {
    expect(readMessage(bytes)).toMatchObject({ ok: false, reason, detail: expect.any(String) });
  });

  it('rejects only the signal of a pack with a dangling table index or a bad field, naming it', () => {
    const [a, b, c] = fleetSignals(1);
    const body = packBody([a!, b!, c!]).body;
    const rejected = (index: number, detail: RegExp) => ({
      kind: 'rejected',
      index,
      reason: 'schema',
      detail: expect.stringMatching(detail),
    });
    const dangling = structuredClone(body);
    dangling.subjects[0]!.sig[1]!.i = 7;
    expect(items(readMessage(json(dangling)))).toEqual([
      { kind: 'signal', index: 0, message: a },
      rejected(1, /^signal 1: ids\[7\] does not exist/),
      { kind: 'signal', index: 2, message: c },
    ]);
    const bad = structuredClone(body);
    (bad.subjects[0]!.sig[1]!.d as { score: number }).score = 155;
    bad.subjects[0]!.sig[2]!.dt = 0.5;
    expect(items(readMessage(zlib(bad)))).toEqual([
      { kind: 'signal', index: 0, message: a },
      rejected(1, /^signal 1: data\.score/),
      rejected(2, /^signal 2: subjects\.0\.sig\.2\.dt/),
    ]);
    // A bad subject costs its own signals; only a bad envelope (here: no signal array) costs the message.
    const second = packBody([a!, ...fleetSignals(2).slice(3, 5)]).body;
    expect(second.subjects).toHaveLength(2);
    (second.subjects[0] as { id: string }).id = 'not a uaid';
    expect(items(readMessage(json(second)))).toEqual([
      rejected(0, /^signal 0: subjects\.0\.id/),
      { kind: 'signal', index: 1, message: fleetSignals(2)[3] },
      { kind: 'signal', index: 2, message: fleetSignals(2)[4] },
    ]);
    expect(readMessage(json({ ...body, subjects: [{ id: a!.subject }] }))).toMatchObject({
      ok: false,
      reason: 'schema',
    });
    expect(readMessage(json({ ...body, run: 'nope' }))).toMatchObject({ ok: false, reason: 'schema' });
  });

  it('reads values and fields it does not know, counting each; an unknown status is counted, not read', () => {
    const [a, b] = fleetSignals(1);
    const math = b as Extract<typeof b, { data: { outcome: string } }>;
    const open = {
      ...math,
      data: { ...math.data, outcome: 'partial', reason: 'new-reason', transport: 'grpc', score: 50, flavour: 1 },
      memo: 'x',
    };
    expect(items(readMessage(json(open)))).toEqual([
      { kind: 'signal', index: 0, message: open },
      { kind: 'unknown', index: 0, unknown: 'value', name: 'outcome=partial' },
      { kind: 'unknown', index: 0, unknown: 'value', name: 'reason=new-reason' },
      { kind: 'unknown', index: 0, unknown: 'value', name: 'transport=grpc' },
      { kind: 'unknown', index: 0, unknown: 'value', name: 'score=50' },
      { kind: 'unknown', index: 0, unknown: 'field', name: 'memo' },
      { kind: 'unknown', index: 0, unknown: 'field', name: 'data.flavour' },
    ]);
    expect(items(readMessage(json({ ...a, status: 'paused' })))).toEqual([
      { kind: 'unknown', index: 0, unknown: 'value', name: 'status=paused' },
    ]);
    // v1: its transports are hcs25's protocol names; its reason codes were never a closed list.
    const v1open = { ...v1, status: 'ok', data: { ...v1.data, outcome: 'partial', transport: 'rest', reason: 'zz' } };
    expect(items(readMessage(json(v1open)))).toEqual([
      { kind: 'signal', index: 0, message: v1open },
      { kind: 'unknown', index: 0, unknown: 'value', name: 'outcome=partial' },
      { kind: 'unknown', index: 0, unknown: 'value', name: 'transport=rest' },
    ]);
    expect(items(readMessage(json({ ...v1, status: 'paused' })))).toEqual([
      { kind: 'unknown', index: 0, unknown: 'value', name: 'status=paused' },
    ]);
    // In a pack: envelope, subject and packed-signal fields by where they are, values at their signal's index.
    const body = structuredClone(packBody([a!, b!]).body);
    Object.assign(body, { hint: 1 });
    Object.assign(body.subjects[0]!, { tag: 'x' });
    Object.assign(body.subjects[0]!.sig[1]!, { w: 2, st: 'paused' });
    body.subjects[0]!.sig[0]!.d = { ...body.subjects[0]!.sig[0]!.d, reason: 'dns', score: 0, reachable: false };
    expect(items(readMessage(zlib(body)))).toEqual([
      { kind: 'unknown', index: 0, unknown: 'field', name: 'hint' },
      { kind: 'signal', index: 0, message: { ...a, data: { ...a!.data, reason: 'dns', score: 0, reachable: false } } },
      { kind: 'unknown', index: 1, unknown: 'value', name: 'status=paused' },
      { kind: 'unknown', index: 1, unknown: 'field', name: 'sig.w' },
      { kind: 'unknown', index: 0, unknown: 'field', name: 'subjects.tag' },
    ]);
  });

  it('a packed signal gets the verdict and detail of the whole v2 signal schema on its expanded form, alone', () => {
    const [a, b] = fleetSignals(1);
    const body = packBody([a!, b!]).body;
    const expanded = expandPack(body);
    const whole = (value: unknown) => {
      const r = signalMessageV2Schema.safeParse(value);
      const issue = r.error?.issues[0];
      return r.success ? { ok: true } : { ok: false, detail: `signal 1: ${issue!.path.join('.')}: ${issue!.message}` };
    };
    fc.assert(
      fc.property(
        fc.constantFrom('score', 'latencyMs', 'transport', 'reachable', 'httpStatus', 'extra'),
        fc.oneof(fc.constant(undefined), fc.integer({ min: -5, max: 700 }), fc.string({ maxLength: 6 }), fc.boolean()),
        fc.constantFrom(0, 1, 86_400_000, -86_400_000),
        fc.constantFrom('2026-11-21T10:00:00.000Z', '9999-12-31T23:59:59.000Z'),
        (key, value, dt, at) => {
          const bad = structuredClone({ ...body, at });
          const sig = bad.subjects[0]!.sig[1]!;
          sig.dt = dt;
          sig.d = { ...sig.d, [key]: value };
          let expected: { ok: boolean; detail?: string };
          try {
            expected = whole(expandPack(bad)[1]);
          } catch (err) {
            expected = { ok: false, detail: `signal 1: ${(err as Error).message}` }; // a time out of range
          }
          const got = readMessage(json(bad));
          if (!got.ok) throw new Error(`the whole pack was rejected: ${got.detail}`);
          // The other signal is read whatever happens to signal 1.
          const fetchedAt = new Date(Date.parse(at) + bad.subjects[0]!.sig[0]!.dt).toISOString();
          expect(got.items[0]).toEqual({ kind: 'signal', index: 0, message: { ...a, fetchedAt } });
          const one = got.items.filter((item) => item.index === 1);
          if (!expected.ok)
            expect(one).toEqual([{ kind: 'rejected', index: 1, reason: 'schema', detail: expected.detail }]);
          else
            expect(one[0]).toEqual({
              kind: 'signal',
              index: 1,
              message: signalMessageV2Schema.parse(expandPack(bad)[1]),
            });
        },
      ),
      { numRuns: 300 },
    );
    expect(expanded).toHaveLength(2);
  });

  it('never throws on random bytes, zlib-looking or not', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 1100 }), fc.boolean(), (bytes, asZlib) => {
        const body = asZlib ? Buffer.concat([Buffer.from([0x78]), bytes]) : bytes;
        expect(() => readMessage(body)).not.toThrow();
      }),
    );
    const packer = new SignalPacker({ mode: 'dense' });
    const [m] = [...fleetSignals(2).flatMap((s) => packer.add(s)), ...packer.flush()];
    fc.assert(
      fc.property(fc.nat(m!.bytes.length - 1), fc.nat(255), (at, value) => {
        const corrupted = Buffer.from(m!.bytes);
        corrupted[at] = value;
        expect(() => readMessage(corrupted)).not.toThrow();
      }),
    );
  });
});
