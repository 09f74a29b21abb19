/**
 * Packing a format-3 run's signals as they arrive: a subject's signals wait for each other and go into one message;
 * results of many subjects interleaved still give whole subjects per message; the flush timer delivers what waits.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { readMessage } from '../../src/format/read.js';
import { buildSignalV3 } from '../../src/format/write-v3.js';
import { SignalPackingV3 } from '../../src/publish/packing-v3.js';
import type { PackedOut, PackingOptions } from '../../src/publish/packing-base.js';
import { RUN, RUN_KEY } from '../format/fixtures.js';
import { fleetResults } from '../format/fleet.js';
import { SignalPackerV3, signalUnitV3 } from '../../src/format/pack-v3.js';

const AGENTS = 60;
/** Probe, math and science of each agent, interleaved across agents as a concurrent runner yields them. */
const built = Array.from({ length: 3 }, (_, k) =>
  Array.from({ length: AGENTS }, (_, i) => {
    const r = fleetResults(i)[k]!;
    return {
      key: `j:${r.kind}|${r.agent.subject}`,
      subject: r.agent.subject,
      json: buildSignalV3(r, { run: RUN, runKey: RUN_KEY }).json,
    };
  }),
).flat();

/** Agent i's three signals; `pad` lengthens its UAID (80 characters: two such subjects no longer fit one message). */
function subjectSignals(i: number, pad = 0) {
  return fleetResults(i).map((r) => {
    const subject = r.agent.subject + 'x'.repeat(pad);
    return {
      key: `j:${r.kind}|${subject}`,
      subject,
      json: buildSignalV3({ ...r, agent: { ...r.agent, subject } }, { run: RUN, runKey: RUN_KEY }).json,
    };
  });
}

/** How many messages the packer makes of these subjects added in this order, flushed at the end. */
function messagesFor(...subjects: ReturnType<typeof subjectSignals>[]): number {
  const packer = new SignalPackerV3({ mode: 'json' });
  const out = subjects.flatMap((s) => packer.addGroup(s.map((b) => signalUnitV3(b.json))));
  return out.length + packer.flush().length;
}

function packing(mode: PackingOptions['mode'], out: PackedOut[], flushMs = 60_000): SignalPackingV3 {
  return new SignalPackingV3({ mode, flushMs, perSubject: 3, onPacked: (m) => out.push(...m) });
}

/** The subjects of each delivered message, from its bytes as a reader reads them. */
function subjectsOf(out: readonly PackedOut[]): string[][] {
  return out.map((m) => {
    const read = readMessage(m.bytes);
    if (!read.ok) throw new Error(read.detail);
    return read.items.flatMap((i) => (i.kind === 'signal' ? [i.message.subject] : []));
  });
}

describe('SignalPackingV3', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it.each(['json', 'dense'] as const)(
    '%s: interleaved results give whole subjects per message, every key once',
    (mode) => {
      const out: PackedOut[] = [];
      const p = packing(mode, out);
      for (const b of built) p.add(b.key, b.json);
      p.flush();
      const keys = out.flatMap((m) => m.keys);
      expect(keys.sort()).toEqual(built.map((b) => b.key).sort());
      const seen = new Map<string, number>();
      subjectsOf(out).forEach((subjects, k) => {
        for (const s of subjects) {
          expect(seen.get(s) ?? k).toBe(k);
          seen.set(s, k);
        }
      });
      expect(out.length).toBeLessThan(AGENTS / 1.5);
      // Each message is journaled with the keys of its signals in index order.
      for (const m of out) {
        const subjects = subjectsOf([m])[0]!;
        expect(m.keys.map((key) => key.slice(key.indexOf('|') + 1))).toEqual(subjects);
        expect(m.encoding).toBe('json');
      }
    },
  );

  it('holds a subject until its evals are in; nothing goes out before a message is full or the timer fires', () => {
    const out: PackedOut[] = [];
    const p = packing('json', out, 2_000);
    const first = built.filter((b) => b.subject === built[0]!.subject);
    p.add(first[0]!.key, first[0]!.json);
    p.add(first[1]!.key, first[1]!.json);
    vi.advanceTimersByTime(1_999);
    expect(out).toHaveLength(0);
    // The subject's last signal completes it: it joins an open message, which waits the flush time for a partner.
    p.add(first[2]!.key, first[2]!.json);
    vi.advanceTimersByTime(1_999);
    expect(out).toHaveLength(0);
    vi.advanceTimersByTime(1);
    expect(out).toHaveLength(1);
    expect(out[0]!.keys).toEqual(first.map((b) => b.key));
    p.stop();
  });

  it('json: large subjects that come together each wait for a smaller partner instead of going out alone', () => {
    const big = [1, 2, 3, 4, 5, 6].map((i) => subjectSignals(i, 80));
    const small = [7, 8, 9, 10, 11, 12].map((i) => subjectSignals(i));
    // The premise: two large subjects do not fit one message; a large and a small one do.
    expect(messagesFor(big[0]!, big[1]!)).toBe(2);
    expect(messagesFor(big[0]!, small[0]!)).toBe(1);
    expect(messagesFor(...big, ...small)).toBe(6);
  });

  it('json: the timer delivers each open message when it has waited the flush time, not every open message', () => {
    const out: PackedOut[] = [];
    const p = packing('json', out, 2_000);
    const [a, b] = [subjectSignals(1, 80), subjectSignals(2, 80)];
    for (const x of a) p.add(x.key, x.json);
    vi.advanceTimersByTime(1_500);
    for (const x of b) p.add(x.key, x.json);
    vi.advanceTimersByTime(500);
    expect(out.map((m) => m.keys)).toEqual([a.map((x) => x.key)]);
    vi.advanceTimersByTime(1_500);
    expect(out.map((m) => m.keys)).toEqual([a.map((x) => x.key), b.map((x) => x.key)]);
    p.stop();
  });

  it('the timer delivers a subject whose last eval never comes, and subject mode sends each subject alone', () => {
    const out: PackedOut[] = [];
    const p = packing('subject', out, 500);
    const [a, b] = [0, 1].map((i) => built.filter((x) => x.subject === built[i]!.subject));
    for (const x of a!) p.add(x.key, x.json);
    expect(out).toHaveLength(1);
    p.add(b![0]!.key, b![0]!.json);
    vi.advanceTimersByTime(500);
    expect(out.map((m) => m.keys)).toEqual([a!.map((x) => x.key), [b![0]!.key]]);
    p.stop();
  });

  it('none: one signal per message, as soon as it is handed over', () => {
    const out: PackedOut[] = [];
    const p = packing('none', out);
    for (const b of built.slice(0, 5)) p.add(b.key, b.json);
    expect(out.map((m) => m.keys)).toEqual(built.slice(0, 5).map((b) => [b.key]));
    expect(out.map((m) => Buffer.from(m.bytes).toString('utf8'))).toEqual(built.slice(0, 5).map((b) => b.json));
  });
});
