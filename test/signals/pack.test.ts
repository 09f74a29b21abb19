import { describe, expect, it } from 'vitest';
import { SignalPacker, type PackMode, type PackedMessage } from '../../src/signals/pack.js';
import { fleetAgent, fleetSignals } from './fleet.js';

function packAll(mode: PackMode, signals = fleetSignals(1000)): PackedMessage[] {
  const packer = new SignalPacker({ mode });
  return [...signals.flatMap((s) => packer.add(s)), ...packer.flush()];
}

describe('SignalPacker sizes', () => {
  it('report', () => {
    const lens = Array.from({ length: 1000 }, (_, i) => fleetAgent(i).subject.length);
    console.log('uaid avg', lens.reduce((a, b) => a + b) / 1000);
    for (const mode of ['dense', 'subject', 'none'] as const) {
      const msgs = packAll(mode);
      const bytes = msgs.map((m) => m.bytes.length);
      console.log(mode, msgs.length / 1000, Math.max(...bytes), bytes.reduce((a, b) => a + b) / msgs.length);
    }
    console.log(packAll('subject')[0]!.bytes.toString());
  });
});
