/**
 * Packing a run's journaled signals into messages as they arrive (format 3: packing-v3.ts; here v2): the packers (one, or in `subject` mode one per
 * subject whose signals are still coming, as results arrive interleaved) and the flush timer that delivers a partly
 * filled message no signal has completed for a while.
 *
 * Packing decides only where a message ends and what its bytes are. Every exactly-once decision stays with the
 * caller: it journals each delivered message (its bytes and its signals' keys) before the message's transaction id
 * is used. Signals handed over and not yet delivered in a message are journaled results in no pack, which a resume
 * packs anew, so a crash in between loses and repeats nothing.
 */
import { packData, type PackRecord } from './journal.js';
import { SignalPackingV3 } from './packing-v3.js';
import { SignalPacker, type PackMode, type PackedMessage } from '../format/pack.js';
import { signalKey, type SignalMessageV2 } from '../format/schema-v2.js';

/** One message out of the packers: what the journal's pack record holds, and the bytes to submit. */
export interface PackedOut {
  encoding: PackRecord['encoding'];
  /** As {@link packData} writes it for the journal. */
  data: string;
  bytes: Uint8Array;
  /** Journal keys of its signals, in index order. */
  keys: string[];
}

export interface PackingOptions {
  mode: PackMode;
  /** A partly filled message is delivered when no signal has completed it for this long, ms (format 3: not finite = no timer). */
  flushMs: number;
  /** In `subject` mode, a subject's message is complete once it holds this many signals (the run's evals). */
  perSubject: number;
  /** Gets each batch of finished messages, synchronously, in order. */
  onPacked: (messages: PackedOut[]) => void;
}

/** What the publisher drives, whatever the run's format. */
export interface SignalPackingLike {
  /** Hands over a journaled signal: its journal key and its message as journaled. */
  add(key: string, json: string): void;
  /** Delivers every open message. */
  flush(): void;
  /** Stops the flush timer; what is open stays undelivered (journaled, packed anew on resume). */
  stop(): void;
  /** Resolves when fewer than `limit` handed-over signals wait for their message. */
  whenBelow(limit: number): Promise<void>;
}

/** The packing of a run in its format: format 3 (packing-v3.ts), or v2 for a run journaled in it. */
export function signalPacking(format: 2 | 3, options: PackingOptions): SignalPackingLike {
  return format === 3 ? new SignalPackingV3(options) : new SignalPacking(options);
}

/** The v2 packers of one run as the publisher drives them. */
export class SignalPacking implements SignalPackingLike {
  private readonly packers = new Map<string, SignalPacker>();
  /** When each packer's open message got its first signal: the flush timer delivers it `flushMs` later. */
  private readonly opened = new Map<string, number>();
  /** Journal key of each signal in a packer, by its packer key. */
  private readonly packing = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  /** Signals handed over and not yet delivered in a message. */
  private pending = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly options: PackingOptions) {}

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

  /** Stops the flush timer; what is open stays undelivered (journaled, packed anew on resume). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Resolves when fewer than `limit` handed-over signals wait for their message. */
  async whenBelow(limit: number): Promise<void> {
    while (this.pending >= limit) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  private deliver(messages: PackedMessage[]): void {
    if (messages.length === 0) return;
    const out = messages.map((m) => {
      const keys = m.keys.map((k) => this.packing.get(k)!);
      for (const k of m.keys) this.packing.delete(k);
      this.pending -= keys.length;
      return { encoding: m.encoding, data: packData(m.encoding, m.bytes), bytes: m.bytes, keys };
    });
    this.options.onPacked(out);
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
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
