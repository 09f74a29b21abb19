import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../src/core/agent.js';
import type { AnyEvalResult } from '../../src/evaluate/types.js';
import { readMessage, type MessageItem } from '../../src/format/read.js';
import { SignalPackerV3, signalUnitV3, type PackedMessageV3, type SignalUnitV3 } from '../../src/format/pack-v3.js';
import {
  FORMAT_ID_V3,
  readSignalV3Schema,
  revealMessageV3Schema,
  signalsMessageV3Schema,
  zlibMessageV3Schema,
} from '../../src/format/schema-v3.js';
import { buildRevealMessageV3, buildSignalV3 } from '../../src/format/write-v3.js';
import { buildSignalV2 } from '../../src/format/write.js';
import type { PackMode } from '../../src/format/pack.js';
import { RUN, RUN_KEY, agent, evalResult, probeResult } from './fixtures.js';
import { fleetResults } from './fleet.js';

const ctx = { run: RUN, runKey: RUN_KEY };

/** An agent with a UAID of exactly `length` characters. */
function agentOf(i: number, length = 140): Agent {
  const head = `uaid:aid:${'Q'.repeat(40)}${i};uid=0;registry=hol;proto=a2a;nativeId=`;
  const host = `agent-${i}.example.com`;
  const subject = `${head}${'x'.repeat(length - head.length - host.length)}${host}`;
  expect(subject).toHaveLength(length);
  return { subject, name: `agent-${i}`, protocol: 'a2a', endpoint: `https://${host}`, source: 'hcs://2/0.0.4321' };
}

/** Probe, math and science of one agent, all correct (the typical case), a second apart. */
function typical(a: Agent): AnyEvalResult[] {
  return [
    probeResult({ agent: a, latencyMs: 118 }),
    evalResult({ agent: a, fetchedAt: '2026-11-21T10:00:00.900Z', answer: '24', response: '24' }),
    evalResult({
      agent: a,
      kind: 'science',
      questionId: 'science:builtin:12',
      answer: 'D',
      response: 'D',
      fetchedAt: '2026-11-21T10:00:02.100Z',
    }),
  ];
}

function units(results: readonly AnyEvalResult[]): SignalUnitV3[] {
  return results.map((r) => signalUnitV3(buildSignalV3(r, ctx).json));
}

/** Packs each agent's results as a group, in order. */
function pack(mode: PackMode, groups: readonly AnyEvalResult[][]): PackedMessageV3[] {
  const packer = new SignalPackerV3({ mode });
  const out = groups.flatMap((g) => packer.addGroup(units(g)));
  return [...out, ...packer.flush()];
}

function signalsOf(items: MessageItem[]) {
  return items.flatMap((item) => (item.kind === 'signal' ? [item] : []));
}

describe('format 3 builders', () => {
  it('builds a one-signal message that validates against the v3 schema, status omitted when ok', () => {
    for (const result of [...typical(agent), ...fleetResults(3), ...fleetResults(7)]) {
      const built = buildSignalV3(result, ctx);
      expect(signalsMessageV3Schema.safeParse(built.message).success).toBe(true);
      expect(built.json.startsWith(`{"fmt":"${FORMAT_ID_V3}","op":"signals"`)).toBe(true);
    }
    const probe = buildSignalV3(probeResult(), ctx).message.subjects[0]!.sig[0]!;
    expect(probe).toEqual({ i: 0, dt: 0, score: 100, ms: 120 });
  });

  it('writes r only for a reply that was not exactly the answer, and the hashes v2 writes without the prefix', () => {
    const compliant = evalResult();
    const sloppy = evalResult({ response: 'The answer is 95.', compliant: false });
    const v2 = buildSignalV2(sloppy, ctx).message.data as { questionHash: string; responseHash: string };
    const c = buildSignalV3(compliant, ctx).message.subjects[0]!.sig[0]!;
    const s = buildSignalV3(sloppy, ctx).message.subjects[0]!.sig[0]!;
    expect(c.r).toBeUndefined();
    expect(c.a).toBe('95');
    expect(s.r).toBe(v2.responseHash.slice('hs256:'.length));
    expect(s.q).toBe(v2.questionHash.slice('hs256:'.length));
    const skipped = buildSignalV3(
      evalResult({ outcome: 'skipped', answer: null, response: null, compliant: false }),
      ctx,
    );
    expect(skipped.message.subjects[0]!.sig[0]).toMatchObject({ st: 'missing', score: 0, outcome: 'skipped' });
    expect(skipped.message.subjects[0]!.sig[0]).not.toHaveProperty('q');
  });

  it('names the HTTP status of a probe only when it failed', () => {
    const down = buildSignalV3(probeResult({ reachable: false, httpStatus: 503, reason: 'http 503' }), ctx);
    expect(down.message.subjects[0]!.sig[0]).toMatchObject({ score: 0, http: 503 });
    expect(buildSignalV3(probeResult({ httpStatus: 204 }), ctx).message.subjects[0]!.sig[0]).not.toHaveProperty('http');
  });

  it('builds a reveal that validates and reads back as a format-3 reveal record', () => {
    const built = buildRevealMessageV3({
      run: RUN,
      key: RUN_KEY.toString('base64url'),
      seed: 'a1b2c3d4e5f60718',
      generator: 'hcs25-questions@1',
      grader: 'first-token@1',
    });
    expect(revealMessageV3Schema.safeParse(JSON.parse(built.json)).success).toBe(true);
    const read = readMessage(built.json, { encoding: 'utf8' });
    expect(read.ok && read.items).toEqual([
      { kind: 'reveal', index: 0, v: 3, message: built.message, validated: true },
    ]);
  });
});

describe('format 3 packing and reading', () => {
  const fleet = Array.from({ length: 40 }, (_, i) => fleetResults(i));

  it.each(['json', 'subject', 'none', 'dense'] as const)('round-trips every signal in %s mode', (mode) => {
    const messages = pack(mode, fleet);
    const expected = fleet.flat().map((r) => buildSignalV2(r, ctx).message);
    const read = messages.flatMap((m) => {
      expect(m.bytes.length).toBeLessThanOrEqual(1024);
      const value = JSON.parse(m.bytes.toString('utf8'));
      const schema = mode === 'dense' && value.op === 'zlib' ? zlibMessageV3Schema : signalsMessageV3Schema;
      expect(schema.safeParse(value).success).toBe(true);
      const r = readMessage(m.bytes);
      if (!r.ok) throw new Error(r.detail);
      expect(r.items.every((i) => i.kind === 'signal')).toBe(true);
      return signalsOf(r.items).map((i) => i.message);
    });
    expect(read).toHaveLength(expected.length);
    // The internal form is the v2 signal's with `v: 3`, less what format 3 leaves out on purpose.
    const byKey = new Map(read.map((m) => [`${m.signal}|${m.subject}`, m]));
    for (const v2 of expected) {
      const got = byKey.get(`${v2.signal}|${v2.subject}`)!;
      const data = { ...v2.data } as Record<string, unknown>;
      if (data.compliant === true) delete data.responseHash;
      if ('reachable' in data && data.reachable === true) delete data.httpStatus;
      expect(got).toEqual({ ...v2, v: 3, data });
      expect(readSignalV3Schema.safeParse(got).success).toBe(true);
    }
    if (mode === 'none') expect(messages).toHaveLength(expected.length);
    if (mode === 'subject') expect(messages).toHaveLength(fleet.length);
    if (mode === 'dense') expect(messages.some((m) => JSON.parse(m.bytes.toString()).op === 'zlib')).toBe(true);
  });

  it('never splits a subject between messages when its signals fit one', () => {
    for (const mode of ['json', 'dense'] as const) {
      const messages = pack(mode, fleet);
      const seen = new Map<string, number>();
      messages.forEach((m, k) => {
        for (const u of m.units) {
          const at = seen.get(u.subject);
          if (at !== undefined) expect(at).toBe(k);
          seen.set(u.subject, k);
        }
      });
      expect(messages.length).toBeLessThan(fleet.length);
    }
  });

  it('fits 2 subjects × 3 typical signals with 140-character UAIDs in one json message', () => {
    const messages = pack('json', [typical(agentOf(1)), typical(agentOf(2))]);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.units).toHaveLength(6);
    const read = readMessage(messages[0]!.bytes);
    expect(read.ok && signalsOf(read.items)).toHaveLength(6);
  });

  it('packs 140-character UAIDs at most half a message per agent in json mode, fewer dense', () => {
    const groups = Array.from({ length: 200 }, (_, i) => typical(agentOf(i)));
    const json = pack('json', groups).length / groups.length;
    const dense = pack('dense', groups).length / groups.length;
    expect(json).toBeLessThanOrEqual(0.5);
    expect(dense).toBeLessThan(json);
  });

  it('reads a zlib message holding a signals message, and refuses a zlib inside a zlib', () => {
    const json = pack('json', [typical(agent)])[0]!.bytes;
    const wrap = (b: Buffer) =>
      JSON.stringify({ fmt: FORMAT_ID_V3, op: 'zlib', zlib: deflateSync(b).toString('base64') });
    const once = readMessage(wrap(json), { encoding: 'utf8' });
    expect(once.ok && signalsOf(once.items)).toHaveLength(3);
    const twice = readMessage(wrap(Buffer.from(wrap(json))), { encoding: 'utf8' });
    expect(twice.ok).toBe(false);
    const bomb = readMessage(wrap(Buffer.alloc(100_000, 0x20)), { encoding: 'utf8' });
    expect(bomb).toMatchObject({ ok: false, reason: 'too-large' });
  });
});

describe('format 3 reader: each signal stands alone', () => {
  const base = () =>
    JSON.parse(pack('json', [typical(agentOf(1, 110)), typical(agentOf(2, 110))])[0]!.bytes.toString());

  it('rejects a malformed signal with its index and reads the rest', () => {
    const m = base();
    m.subjects[0].sig[1].score = 250;
    m.subjects[1].sig[0].i = 9;
    const read = readMessage(JSON.stringify(m), { encoding: 'utf8' });
    if (!read.ok) throw new Error(read.detail);
    expect(signalsOf(read.items).map((i) => i.index)).toEqual([0, 2, 4, 5]);
    expect(read.items.filter((i) => i.kind === 'rejected')).toEqual([
      expect.objectContaining({ kind: 'rejected', index: 1, reason: 'schema' }),
      expect.objectContaining({ kind: 'rejected', index: 3, reason: 'schema' }),
    ]);
  });

  it('counts unknown statuses (not scored), values and fields, and reads the signals that carry them', () => {
    const m = base();
    m.extra = 1;
    m.subjects[0].sig[0].st = 'degraded';
    m.subjects[0].sig[1].outcome = 'partial';
    m.subjects[0].sig[1].score = 50;
    m.subjects[0].sig[2].reason = 'quota';
    m.subjects[0].sig[2].mood = 'happy';
    const read = readMessage(JSON.stringify(m), { encoding: 'utf8' });
    if (!read.ok) throw new Error(read.detail);
    const unknown = read.items.flatMap((i) => (i.kind === 'unknown' ? [`${i.index} ${i.unknown} ${i.name}`] : []));
    expect(unknown).toEqual([
      '0 field extra',
      '0 value status=degraded',
      '1 value outcome=partial',
      '1 value score=50',
      '2 value reason=quota',
      '2 field mood',
    ]);
    expect(signalsOf(read.items).map((i) => i.index)).toEqual([1, 2, 3, 4, 5]);
    expect(signalsOf(read.items)[0]!.message.data).toMatchObject({ outcome: 'partial', score: 50 });
  });

  it('rejects the whole message only for a malformed envelope, and counts another hcs25-tool version', () => {
    const m = base();
    m.run = 'not-a-ulid';
    expect(readMessage(JSON.stringify(m), { encoding: 'utf8' })).toMatchObject({ ok: false, reason: 'schema' });
    const other = readMessage(JSON.stringify({ fmt: 'hcs25-tool/4', op: 'signals' }), { encoding: 'utf8' });
    expect(other.ok && other.items).toEqual([{ kind: 'unknown', index: 0, unknown: 'version', name: '4' }]);
    const op = readMessage(JSON.stringify({ fmt: FORMAT_ID_V3, op: 'vote' }), { encoding: 'utf8' });
    expect(op.ok && op.items).toEqual([{ kind: 'unknown', index: 0, unknown: 'op', name: 'vote' }]);
  });
});

describe('format 3 reader: random unknowns (property)', () => {
  const base = JSON.parse(pack('json', [typical(agentOf(1, 110)), typical(agentOf(2, 110))])[0]!.bytes.toString()) as {
    subjects: { sig: Record<string, unknown>[] }[];
  };
  const token = fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/);
  /** One change to signal k: an unknown field, status, outcome, reason or score in 0..100 (read or counted), or a
   * malformed value (rejects that signal alone). */
  const change = fc.oneof(
    fc.record({
      kind: fc.constant('field' as const),
      key: token.filter(
        (k) => !['i', 'dt', 'st', 'score', 'ms', 'reason', 'outcome', 'q', 'a', 'r', 'http'].includes(k),
      ),
      value: fc.jsonValue(),
    }),
    fc.record({
      kind: fc.constant('status' as const),
      value: token.filter((t) => !['ok', 'missing', 'timeout', 'error', 'stale'].includes(t)),
    }),
    fc.record({ kind: fc.constant('open' as const), key: fc.constantFrom('outcome', 'reason'), value: token }),
    fc.record({ kind: fc.constant('score' as const), value: fc.double({ min: 0, max: 100, noNaN: true }) }),
    fc.record({
      kind: fc.constant('bad' as const),
      key: fc.constantFrom('i', 'dt', 'score', 'q'),
      value: fc.constantFrom(-1.5, 'x', null),
    }),
  );

  it('reads every signal it can, counts what it does not know, rejects only the malformed signal', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: 5 }), change), { selector: ([k]) => k, maxLength: 6 }),
        (changes) => {
          const m = structuredClone(base);
          const sig = m.subjects.flatMap((s) => s.sig);
          const bad = new Set<number>();
          const unscored = new Set<number>();
          for (const [k, c] of changes) {
            if (c.kind === 'field') sig[k]![c.key] = c.value;
            else if (c.kind === 'status') sig[k]!.st = c.value;
            else if (c.kind === 'open') sig[k]![c.key] = c.value;
            else if (c.kind === 'score') sig[k]!.score = c.value;
            else sig[k]![c.key] = c.value;
            if (c.kind === 'bad') bad.add(k);
            // An eval without `outcome` is a graded answer: correct (100) or wrong (0), no other score.
            const graded = c.value === 100 || c.value === 0;
            if (c.kind === 'score' && sig[k]!.i !== 0 && sig[k]!.outcome === undefined && !graded) bad.add(k);
            if (c.kind === 'status') unscored.add(k);
          }
          const json = JSON.stringify(m);
          fc.pre(Buffer.byteLength(json) <= 1024);
          const read = readMessage(json, { encoding: 'utf8' });
          expect(read.ok).toBe(true);
          if (!read.ok) return;
          const rejected = new Set(read.items.flatMap((i) => (i.kind === 'rejected' ? [i.index] : [])));
          expect(rejected).toEqual(bad);
          const read6 = signalsOf(read.items).map((i) => i.index);
          expect(read6).toEqual([0, 1, 2, 3, 4, 5].filter((k) => !bad.has(k) && !unscored.has(k)));
        },
      ),
      { numRuns: 200 },
    );
  });
});
