/**
 * A cycle's schedule: every agent is asked once per cycle, at a slot spread evenly over the period (a hash of its
 * subject, so slots are stable across restarts). The schedule is made when the cycle opens and kept across its runs.
 */
import { createHash } from 'node:crypto';

/** Where in each cycle an agent is asked, in [0, 1). */
export function slotOf(subject: string): number {
  return createHash('sha256').update(subject).digest().readUInt32BE(0) / 2 ** 32;
}

export class Schedule {
  /** The cycle's agents in slot order; `next` is the first whose slot has not come yet. */
  private readonly order: { subject: string; slot: number }[];
  private next = 0;

  constructor(subjects: Iterable<string>) {
    this.order = Array.from(subjects, (subject) => ({ subject, slot: slotOf(subject) }));
    this.order.sort((a, b) => a.slot - b.slot);
  }

  /**
   * The agents whose slot has come by `elapsed` (the part of the cycle gone, 0–1) since the last call. Agents no
   * longer `live` are passed over: one deleted since the schedule was made does not hold back those after it.
   */
  *due(elapsed: number, live: (subject: string) => boolean): IterableIterator<string> {
    while (this.next < this.order.length) {
      const { subject, slot } = this.order[this.next]!;
      const alive = live(subject);
      if (alive && slot > elapsed) return;
      this.next++;
      if (alive) yield subject;
    }
  }
}
