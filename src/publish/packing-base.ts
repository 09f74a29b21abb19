/**
 * What the packing of either format shares (packing.ts for v2, packing-v3.ts for format 3): the messages it hands the
 * publisher, its options, and the bookkeeping of journal keys in flight, delivery, back-pressure and the flush timer.
 */
import { packData, type PackRecord } from './journal.js';
import type { PackMode } from '../format/pack.js';

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
  /**
   * A partly filled message is delivered this long after it was begun, ms; a subject first waits as long for the rest
   * of its signals (not finite: no timer, as in a dry run).
   */
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

/** What both formats' packings share: the journal keys in flight, delivery to the caller, back-pressure, the timer. */
export abstract class Packing implements SignalPackingLike {
  /** Journal key of each signal handed over and not yet delivered, by its signal key. */
  protected readonly packing = new Map<string, string>();
  protected timer: NodeJS.Timeout | undefined;
  /** Signals handed over and not yet delivered in a message. */
  protected pending = 0;
  private waiters: (() => void)[] = [];

  constructor(protected readonly options: PackingOptions) {}

  abstract add(key: string, json: string): void;
  abstract flush(): void;

  /** Stops the flush timer; what is open stays undelivered (journaled, packed anew on resume). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Resolves when fewer than `limit` handed-over signals wait for their message. */
  async whenBelow(limit: number): Promise<void> {
    while (this.pending >= limit) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  /** Hands finished messages to the caller with their signals' journal keys, and wakes whoever waits for room. */
  protected deliver(
    messages: ReadonlyArray<{ encoding: PackRecord['encoding']; bytes: Buffer; keys: string[] }>,
  ): void {
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
}
