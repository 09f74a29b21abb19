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
  it('reads v1 as built, and v1 with extra fields (kept, ignored)', () => {
    expect(items(readMessage(json(v1)))).toEqual([{ kind: 'signal', index: 0, message: v1 }]);
    const extra = { ...v1, memo: 'x', data: { ...v1.data, jitter: 1 } };
    expect(items(readMessage(json(extra)))).toEqual([{ kind: 'signal', index: 0, message: extra }]);
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
    ['schema', json({ ...v2, status: 'great' })],
    ['schema', json({ ...v2, data: { ...v2.data, reason: 'get' } })],
    ['schema', json({ ...v2, signal: 'Not An Id' })],
    ['schema', json({ ...v1, data: { ...v1.data, score: 55 } })],
  ])('rejects malformed messages only: %s', (reason, bytes) => {
    expect(readMessage(bytes)).toMatchObject({ ok: false, reason, detail: expect.any(String) });
  });

  it('rejects a pack with a dangling table index or a bad packed signal, naming it', () => {
    const [a, b] = fleetSignals(1);
    const body = packBody([a!, b!]).body;
    expect(readMessage(json({ ...body, ids: ['availability.probe'] }))).toMatchObject({
      ok: false,
      reason: 'schema',
      detail: expect.stringMatching(/ids\[1\]/),
    });
    const bad = structuredClone(body);
    (bad.subjects[0]!.sig[1]!.d as { score: number }).score = 55;
    expect(readMessage(json(bad))).toMatchObject({
      ok: false,
      reason: 'schema',
      detail: expect.stringMatching(/^signal 1: data\.score/),
    });
  });

  it('a packed signal gets the verdict and detail of the whole v2 signal schema on its expanded form', () => {
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
          } catch {
            return; // an unexpandable pack (a time out of range) is the pack's own rejection
          }
          const got = readMessage(json(bad));
          expect(got.ok).toBe(expected.ok);
          if (!got.ok) expect(got.detail).toBe(expected.detail);
          else
            expect((got.items[1] as { message: unknown }).message).toEqual(
              signalMessageV2Schema.parse(expandPack(bad)[1]),
            );
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
