/**
 * Packing a run's journaled signals into messages as they arrive (format 3: packing-v3.ts; here v2, and
 * the choice between them): the packers (one, or in `subject` mode one per subject whose signals are still coming, as results arrive interleaved) and the flush timer that delivers a partly
 * filled message no signal has completed for a while.
 *
 * Packing decides only where a message ends and what its bytes are. Every exactly-once decision stays with the
 * caller: it journals each delivered message (its bytes and its signals' keys) before the message's transaction id
 * is used. Signals handed over and not yet delivered in a message are journaled results in no pack, which a resume
 * packs anew, so a crash in between loses and repeats nothing.
 */
import { Packing, type PackingOptions, type SignalPackingLike } from './packing-base.js';
import { SignalPackingV3 } from './packing-v3.js';
import { SignalPacker } from '../format/pack.js';
import { signalKey, type SignalMessageV2 } from '../format/schema-v2.js';

/** The packing of a run in its format: format 3 (packing-v3.ts), or v2 for a run journaled in it. */
export function signalPacking(format: 2 | 3, options: PackingOptions): SignalPackingLike {
  return format === 3 ? new SignalPackingV3(options) : new SignalPacking(options);
}

/** The v2 packers of one run as the publisher drives them. */
export class SignalPacking extends Packing {
  private readonly packers = new Map<string, SignalPacker>();
  /** When each packer's open message got its first signal: the flush timer delivers it `flushMs` later. */
  private readonly opened = new Map<string, number>();

  /** Hands over a journaled signal: its journal key and its message as journaled (whose length is the size estimate). */
  add(key: string, json: string): void {
    this.pending++;
    const signal = JSON.parse(json) as SignalMessageV2;
    this.packing.set(signalKey(signal), key);
    const { mode } = this.options;
    const id = mode === 'subject' ? signal.subject : '';
    let packer = this.packers.get(id);
    if (!packer) {
      packer = new SignalPacker({ mode });
      this.packers.set(id, packer);
    }
    const full = packer.add(signal, json.length);
    this.deliver(full);
    if (packer.pending === 0 || (mode === 'subject' && packer.pending >= this.options.perSubject)) this.close(id);
    else if (full.length > 0 || !this.opened.has(id)) this.opened.set(id, Date.now());
    this.schedule();
  }

  /** Delivers every open message. */
  flush(): void {
    this.stop();
    for (const id of [...this.packers.keys()]) this.close(id);
  }

  private close(id: string): void {
    this.deliver(this.packers.get(id)!.flush());
    this.packers.delete(id);
    this.opened.delete(id);
  }

  private schedule(): void {
    if (this.timer || this.opened.size === 0) return;
    let oldest = Number.POSITIVE_INFINITY;
    for (const at of this.opened.values()) oldest = Math.min(oldest, at);
    this.timer = setTimeout(() => this.onTimer(), Math.max(0, oldest + this.options.flushMs - Date.now()));
  }

  private onTimer(): void {
    this.timer = undefined;
    const now = Date.now();
    for (const [id, at] of this.opened) if (now - at >= this.options.flushMs) this.close(id);
    this.schedule();
  }
}
