import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { MessageTooLargeError } from '../../src/core/errors.js';
import { buildSignalV2 } from '../../src/format/write.js';
import {
  PACK_MODES,
  SignalPacker,
  packBody,
  packBodySchema,
  readMessage,
  signalKey,
  type PackMode,
  type PackedMessage,
  type SignalMessageV2,
} from '../../src/format/index.js';
import { RUN, RUN_KEY, agent, evalResult, probeResult } from './fixtures.js';
import { fleetAgent, fleetSignals } from './fleet.js';
import { MessagePacker, type PackFormat } from '../../src/format/pack.js';

const FLEET = 1000;
const fleet = fleetSignals(FLEET);

function packAll(mode: PackMode, signals: readonly SignalMessageV2[] = fleet, maxBytes?: number): PackedMessage[] {
  const packer = new SignalPacker({ mode, ...(maxBytes ? { maxBytes } : {}) });
  const out = signals.flatMap((s) => packer.add(s));
  out.push(...packer.flush());
  expect(packer.pending).toBe(0);
  return out;
}

/** Every signal read back from the packed bytes, with its (message number, index) address. */
function readBack(messages: readonly PackedMessage[]): Array<{ at: [number, number]; message: unknown }> {
  return messages.flatMap((m, seq) => {
    const read = readMessage(m.bytes);
    if (!read.ok) throw new Error(`message ${seq} rejected: ${read.reason} ${read.detail}`);
    expect(read.encoding).toBe(m.encoding);
    return read.items.map((item) => {
      if (item.kind !== 'signal') throw new Error(`unexpected ${item.kind}`);
      return { at: [seq, item.index] as [number, number], message: item.message };
    });
  });
}

describe('SignalPacker', () => {
  it('the fleet uses UAIDs of the buildUaid shape, ~120+ characters', () => {
    const lengths = Array.from({ length: FLEET }, (_, i) => fleetAgent(i).subject.length);
    expect(Math.min(...lengths)).toBeGreaterThanOrEqual(120);
  });

  it.each(PACK_MODES)(
    '%s: round trip; every message ≤ 1024 bytes; each signal addressable once by (message, index)',
    (mode) => {
      const messages = packAll(mode);
      for (const m of messages) {
        expect(m.bytes.length).toBeLessThanOrEqual(1024);
        expect(m.keys).toEqual(m.signals.map(signalKey));
      }
      const back = readBack(messages);
      expect(back.map((b) => b.message)).toEqual(messages.flatMap((m) => m.signals));
      // Every signal exactly once, in the order the packer says (the journal's record of what each message holds).
      const byKey = (list: readonly unknown[]) => new Map(list.map((s) => [signalKey(s as SignalMessageV2), s]));
      const read = byKey(back.map((b) => b.message));
      expect(read.size).toBe(fleet.length);
      for (const [key, s] of byKey(fleet)) expect(read.get(key)).toEqual(s);
      expect(new Set(back.map((b) => b.at.join(':'))).size).toBe(back.length);
    },
  );

  it('dense: ≤ 0.375 messages per agent for 1,000 agents × 3 signals, zlib bytes filled close to 1024', () => {
    const messages = packAll('dense');
    expect(messages.length / FLEET).toBeLessThanOrEqual(0.375);
    for (const m of messages) {
      expect(m.encoding).toBe('zlib');
      expect(m.bytes[0]).toBe(0x78);
      expect(packBodySchema.safeParse(JSON.parse(inflateSync(m.bytes).toString('utf8'))).success).toBe(true);
    }
    // Full messages leave less room than the smallest signal would take: filled close to the limit.
    const full = messages.slice(0, -1).map((m) => m.bytes.length);
    expect(full.reduce((a, b) => a + b, 0) / full.length).toBeGreaterThan(900);
  });

  it('subject: one subject per message, readable JSON; none: one v2 signal per message', () => {
    const bySubject = packAll('subject');
    expect(bySubject).toHaveLength(FLEET);
    for (const m of bySubject) {
      expect(new Set(m.signals.map((s) => s.subject)).size).toBe(1);
      expect(m.bytes[0]).toBe(0x7b);
      expect(JSON.parse(m.bytes.toString('utf8'))).toMatchObject({
        p: 'hcs-25',
        op: 'pack',
        v: 2,
        ids: expect.any(Array),
      });
    }
    const single = packAll('none');
    expect(single).toHaveLength(fleet.length);
    expect(single.map((m) => JSON.parse(m.bytes.toString('utf8')))).toEqual(fleet);
  });

  it('returns only full messages from add, and the partial one from flush', () => {
    const packer = new SignalPacker({ mode: 'dense' });
    const first = fleet.slice(0, 6).flatMap((s) => packer.add(s));
    expect(first).toEqual([]);
    expect(packer.pending).toBe(6);
    const partial = packer.flush();
    expect(partial).toHaveLength(1);
    expect(partial[0]!.signals).toEqual(fleet.slice(0, 6));
    expect(packer.flush()).toEqual([]);
  });

  it("groups a subject's signals arriving apart, and the index order is what the reader sees", () => {
    const [p0, m0, , p1, m1] = fleet;
    const packer = new SignalPacker({ mode: 'dense' });
    for (const s of [p0!, p1!, m0!, m1!]) expect(packer.add(s)).toEqual([]);
    const [message] = packer.flush();
    expect(message!.signals).toEqual([p0, m0, p1, m1]);
    expect(readBack([message!]).map((b) => b.message)).toEqual([p0, m0, p1, m1]);
  });

  it('a new run starts a new message; subject mode starts one per subject', () => {
    const other = { ...fleet[1]!, run: '01JDX3V9W5Q8K6T2N4M7P1R0ZB' };
    const packer = new SignalPacker({ mode: 'dense' });
    expect(packer.add(fleet[0]!)).toEqual([]);
    expect(packer.add(other).map((m) => m.signals)).toEqual([[fleet[0]]]);
    const subject = new SignalPacker({ mode: 'subject' });
    expect(fleet.slice(0, 3).flatMap((s) => subject.add(s))).toEqual([]);
    expect(subject.add(fleet[3]!).map((m) => m.signals)).toEqual([fleet.slice(0, 3)]);
  });

  it('never exceeds a smaller limit either, and a signal too big for any pack goes out as a v2 single message', () => {
    for (const m of packAll('dense', fleet.slice(0, 300), 600)) expect(m.bytes.length).toBeLessThanOrEqual(600);
    const long = { ...agent, subject: `${agent.subject};domain=${'x'.repeat(300)}` };
    const big = buildSignalV2(evalResult({ agent: long }), { run: RUN, runKey: RUN_KEY }).message;
    const limit = Buffer.byteLength(JSON.stringify(big));
    expect(Buffer.byteLength(JSON.stringify(packBody([big]).body))).toBeGreaterThan(limit);
    const [single] = packAll('subject', [big], limit);
    expect(single!.bytes.length).toBe(limit);
    expect(JSON.parse(single!.bytes.toString('utf8'))).toEqual(big);
    expect(() => new SignalPacker({ mode: 'subject', maxBytes: 300 }).add(big)).toThrow(MessageTooLargeError);
  });

  it("keeps sources and per-signal transports that differ from the subject's", () => {
    const a = buildSignalV2(probeResult({ transport: 'http' }), {
      run: RUN,
      runKey: RUN_KEY,
      sources: ['hcs://2/0.0.1', 'hcs://2/0.0.2'],
    }).message;
    const b = buildSignalV2(evalResult(), { run: RUN, runKey: RUN_KEY, sources: ['hcs://2/0.0.2'] }).message;
    const [m] = packAll('subject', [a, b]);
    expect(readBack([m!]).map((x) => x.message)).toEqual([a, b]);
  });
});

describe('MessagePacker', () => {
  it('deflates no set of items twice, also when the size estimate jumps past the limit', () => {
    // Items are their raw sizes; "deflated" they take half. Seven 300-byte items pass 1024 unmeasured (the estimate
    // stays under its headroom for six), so the packer measures the seven, then the six that fit.
    const encoded: string[] = [];
    const format: PackFormat<number, { bytes: Buffer; items: number[] }> = {
      mode: 'dense',
      encode(items) {
        encoded.push(items.join(','));
        return { bytes: Buffer.alloc(items.reduce((a, b) => a + b, 0) / 2), items };
      },
      single: (item) => ({ bytes: Buffer.alloc(item), items: [item] }),
      belongs: () => true,
      aloneJsonBytes: (item) => item,
      jsonBytes: (item) => item,
    };
    const packer = new MessagePacker(format, 1024);
    const items = Array.from({ length: 40 }, (_, i) => 300 + i);
    const out = items.flatMap((item) => packer.add(item));
    out.push(...packer.flush());
    expect(out.flatMap((m) => m.items)).toEqual(items);
    expect(out.every((m) => m.bytes.length <= 1024)).toBe(true);
    expect(encoded.length).toBeGreaterThan(out.length);
    expect(new Set(encoded).size).toBe(encoded.length);
  });
});
