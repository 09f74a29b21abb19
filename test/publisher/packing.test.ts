/**
 * Packing off the evaluation's thread: the built `dist/publisher/packing.js` packs in a worker thread (a worker runs
 * JavaScript, not the TypeScript sources), the sources pack in-process. Both deliver the same messages — the same
 * bytes, with the journal keys of their signals in index order — as the SignalPacker itself; a flush resolves only
 * once everything handed over has been delivered; and a worker that dies is reported, never silently dropped.
 */
import { describe, expect, it } from 'vitest';
import { SignalPacker, signalKey, type PackMode, type SignalMessageV2 } from '../../src/signals/index.js';
import { packData } from '../../src/publisher/journal.js';
import { startPacking as startPackingSrc, type PackedOut, type StartPackingOptions } from '../../src/publisher/packing.js';
import { fleetSignals } from '../signals/fleet.js';

type Start = typeof startPackingSrc;
const dist = async (): Promise<{ startPacking: Start; canPackInWorker: () => boolean }> =>
  (await import(new URL('../../dist/publisher/packing.js', import.meta.url).href)) as { startPacking: Start; canPackInWorker: () => boolean };

const signals = fleetSignals(300);
/** A journal key unlike the packer's own signal key, so the mapping between them is tested. */
const journalKey = (s: SignalMessageV2) => `j:${signalKey(s)}`;

/** What the SignalPacker alone makes of the signals, as the packing delivers it. */
function expected(mode: PackMode): Array<Omit<PackedOut, 'bytes'> & { bytes: number[] }> {
  const packer = new SignalPacker({ mode });
  const messages = [...signals.flatMap((s) => packer.add(s, JSON.stringify(s).length)), ...packer.flush()];
  return messages.map((m) => ({ encoding: m.encoding, data: packData(m.encoding, m.bytes), bytes: [...m.bytes], keys: m.signals.map(journalKey) }));
}

async function packAll(start: Start, mode: PackMode, extra: Partial<StartPackingOptions> = {}) {
  const out: PackedOut[] = [];
  const packing = start({ mode, flushMs: 60_000, perSubject: 3, onPacked: (m) => out.push(...m), onError: (e) => { throw e; }, ...extra });
  for (const s of signals) packing.add(journalKey(s), JSON.stringify(s));
  await packing.flush();
  await packing.close();
  return out.map((m) => ({ ...m, bytes: [...m.bytes] }));
}

describe('startPacking', () => {
  it.each(['dense', 'none'] as const)('%s, in-process: the SignalPacker\'s messages, with the journal keys of their signals', async (mode) => {
    expect(await packAll(startPackingSrc, mode)).toEqual(expected(mode));
  });

  it.each(['dense', 'none'] as const)('%s, in the worker thread (dist): the same messages, all delivered when flush resolves', async (mode) => {
    const { startPacking, canPackInWorker } = await dist();
    expect(canPackInWorker()).toBe(true);
    expect(await packAll(startPacking, mode)).toEqual(expected(mode));
  });

  it('subject mode in the worker: a subject\'s message goes out once its evals are in, without a flush', async () => {
    const { startPacking } = await dist();
    const out: PackedOut[] = [];
    const packing = startPacking({ mode: 'subject', flushMs: 60_000, perSubject: 3, onPacked: (m) => out.push(...m), onError: () => undefined });
    const first = signals.filter((s) => s.subject === signals[0]!.subject);
    expect(first).toHaveLength(3);
    for (const s of first) packing.add(journalKey(s), JSON.stringify(s));
    await packing.whenBelow(1);
    expect(out.map((m) => m.keys)).toEqual([first.map(journalKey)]);
    await packing.close();
  });

  it('the flush timer delivers a partly filled message (in the worker)', async () => {
    const { startPacking } = await dist();
    const out: PackedOut[] = [];
    const packing = startPacking({ mode: 'dense', flushMs: 50, perSubject: 3, onPacked: (m) => out.push(...m), onError: () => undefined });
    packing.add('only', JSON.stringify(signals[0]));
    await packing.whenBelow(1);
    expect(out.map((m) => m.keys)).toEqual([['only']]);
    await packing.close();
  });

  it('a worker that dies is reported, and whoever waits on it is released', async () => {
    const { startPacking } = await dist();
    const errors: Error[] = [];
    const packing = startPacking({ mode: 'dense', flushMs: 60_000, perSubject: 3, onPacked: () => undefined, onError: (e) => errors.push(e) });
    // Not JSON: the worker throws on it and exits.
    packing.add('bad', '{not json');
    await packing.whenBelow(1);
    expect(errors.map((e) => e.message)).toEqual([expect.stringMatching(/^the packing worker stopped: /)]);
    await packing.flush();
    await packing.close();
  });
});
