/**
 * Packing a format-3 run's journaled signals into messages as they arrive (packing.ts does v2's). A subject's signals
 * wait for each other (until the run's evals are all in, or the flush timer) and go to the packer together, so a
 * message holds whole subjects; the packer's open message is delivered when it is full or its flush timer fires.
 *
 * As in v2, packing decides only where a message ends and what its bytes are: the caller journals each delivered
 * message before its transaction id is used, and signals handed over and not yet delivered are journaled results in
 * no pack, which a resume packs anew.
 */
import { SignalPackerV3, signalUnitV3, type SignalUnitV3 } from '../format/pack-v3.js';
import { Packing, type PackingOptions } from './packing-base.js';

interface Waiting {
  units: SignalUnitV3[];
  /** When its first signal arrived. */
  since: number;
}

export class SignalPackingV3 extends Packing {
  private readonly packer: SignalPackerV3;
  /** Subjects whose signals wait for the rest of theirs, in arrival order. */
  private readonly waiting = new Map<string, Waiting>();
  /** `subject` and `dense` modes: when the packer's open message got its first subject (json mode's packer knows). */
  private openSince: number | undefined;
  constructor(options: PackingOptions) {
    super(options);
    this.packer = new SignalPackerV3({ mode: options.mode });
  }

  /** Hands over a journaled signal: its journal key and its one-signal message as journaled. */
  add(key: string, json: string): void {
    this.pending++;
    const unit = signalUnitV3(json);
    this.packing.set(unit.key, key);
    if (this.options.mode === 'none') {
      this.deliver(this.packer.addGroup([unit]));
      return;
    }
    let w = this.waiting.get(unit.subject);
    if (!w) {
      w = { units: [], since: Date.now() };
      this.waiting.set(unit.subject, w);
    }
    w.units.push(unit);
    if (w.units.length >= this.options.perSubject) this.release(unit.subject);
    this.schedule();
  }

  /** Delivers every signal handed over. */
  flush(): void {
    this.stop();
    for (const subject of [...this.waiting.keys()]) this.release(subject);
    this.closeOpen();
  }

  /** A subject's signals go to the packer; in `subject` mode they are a message of their own. */
  private release(subject: string): void {
    const w = this.waiting.get(subject)!;
    this.waiting.delete(subject);
    // Timed from the subject's release, not its first signal: a subject that waited long for its own signals still
    // gets a partner, so a signal waits at most twice the flush time.
    const now = Date.now();
    const full = this.packer.addGroup(w.units, now);
    this.deliver(full);
    if (this.options.mode === 'subject') this.closeOpen();
    else if (this.packer.pending === 0) this.openSince = undefined;
    // The one open message began anew with what did not fit (or goes on).
    else if (full.length > 0 || this.openSince === undefined) this.openSince = now;
  }

  private closeOpen(): void {
    this.openSince = undefined;
    this.deliver(this.packer.flush());
  }

  private schedule(): void {
    // No timer (a dry run): what is open is delivered by flush.
    if (this.timer || !Number.isFinite(this.options.flushMs)) return;
    let oldest = this.openedAt() ?? Number.POSITIVE_INFINITY;
    for (const w of this.waiting.values()) oldest = Math.min(oldest, w.since);
    if (oldest === Number.POSITIVE_INFINITY) return;
    this.timer = setTimeout(() => this.onTimer(), Math.max(0, oldest + this.options.flushMs - Date.now()));
  }

  private onTimer(): void {
    this.timer = undefined;
    const now = Date.now();
    for (const [subject, w] of this.waiting) if (now - w.since >= this.options.flushMs) this.release(subject);
    if (this.options.mode === 'json') this.deliver(this.packer.flushOpenedBy(now - this.options.flushMs));
    else if (this.openSince !== undefined && now - this.openSince >= this.options.flushMs) this.closeOpen();
    this.schedule();
  }

  private openedAt(): number | undefined {
    return this.options.mode === 'json' ? this.packer.oldestOpen() : this.openSince;
  }
}
