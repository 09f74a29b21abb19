/**
 * Packing a run's signals as they arrive: the messages are the SignalPacker's own — the same bytes, with the journal
 * keys of their signals in index order; a subject's message goes out once its evals are in; the flush timer delivers
 * a partly filled message.
 */
import { describe, expect, it } from 'vitest';
import { SignalPacker, signalKey, type PackMode, type SignalMessageV2 } from '../../src/format/index.js';
import { packData } from '../../src/publish/journal.js';
import type { PackedOut, PackingOptions } from '../../src/publish/packing-base.js';
import { SignalPacking } from '../../src/publish/packing.js';
import { fleetSignals } from '../format/fleet.js';

const signals = fleetSignals(300);
/** A journal key unlike the packer's own signal key, so the mapping between them is tested. */
const journalKey = (s: SignalMessageV2) => `j:${signalKey(s)}`;

/** What the SignalPacker alone makes of the signals, as the packing delivers it. */
function expected(mode: PackMode): Array<Omit<PackedOut, 'bytes'> & { bytes: number[] }> {
  const packer = new SignalPacker({ mode });
  const messages = [...signals.flatMap((s) => packer.add(s, JSON.stringify(s).length)), ...packer.flush()];
  return messages.map((m) => ({
    encoding: m.encoding,
    data: packData(m.encoding, m.bytes),
    bytes: [...m.bytes],
    keys: m.signals.map(journalKey),
  }));
}

function packAll(mode: PackMode, extra: Partial<PackingOptions> = {}) {
  const out: PackedOut[] = [];
  const packing = new SignalPacking({
    mode,
    flushMs: 60_000,
    perSubject: 3,
    onPacked: (m) => out.push(...m),
    ...extra,
  });
  for (const s of signals) packing.add(journalKey(s), JSON.stringify(s));
  packing.flush();
  packing.stop();
  return out.map((m) => ({ ...m, bytes: [...m.bytes] }));
}

describe('SignalPacking', () => {
  it.each(['dense', 'none'] as const)(
    "%s: the SignalPacker's messages, with the journal keys of their signals",
    (mode) => {
      expect(packAll(mode)).toEqual(expected(mode));
    },
  );

  it("subject mode: a subject's message goes out once its evals are in, without a flush", async () => {
    const out: PackedOut[] = [];
    const packing = new SignalPacking({
      mode: 'subject',
      flushMs: 60_000,
      perSubject: 3,
      onPacked: (m) => out.push(...m),
    });
    const first = signals.filter((s) => s.subject === signals[0]!.subject);
    expect(first).toHaveLength(3);
    for (const s of first) packing.add(journalKey(s), JSON.stringify(s));
    await packing.whenBelow(1);
    expect(out.map((m) => m.keys)).toEqual([first.map(journalKey)]);
    packing.stop();
  });

  it('the flush timer delivers a partly filled message', async () => {
    const out: PackedOut[] = [];
    const packing = new SignalPacking({ mode: 'dense', flushMs: 50, perSubject: 3, onPacked: (m) => out.push(...m) });
    packing.add('only', JSON.stringify(signals[0]));
    await packing.whenBelow(1);
    expect(out.map((m) => m.keys)).toEqual([['only']]);
    packing.stop();
  });
});
