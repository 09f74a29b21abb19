/**
 * The daily fee budget of `hcs25 watch` (`--max-fee-per-day`). Spent today = messages confirmed since 00:00 UTC at the
 * per-message estimate (exact for the network's fixed submit price; `estimateSubmitFee`). Before an agent is asked,
 * the worst case of everything not yet paid is reserved: each signal being evaluated or journaled but not yet in a
 * sent pack may need a message of its own, and each sent pack without a receipt costs one. An agent is asked only
 * when that worst case plus its own signals fits under the cap, so the cap is never passed; when it would be, asking
 * pauses until the next UTC day.
 *
 * Asking an HCS-10 agent is paid too (a connection request, each question, the close, and their records on our
 * outbound topic, plus any HIP-991 fee of the agent's inbound topic): its worst case is reserved with its signals, and
 * each of those transactions is charged as it is submitted.
 */
export interface DailyBudgetOptions {
  capTinybar: bigint;
  estimateTinybar: bigint;
  now?: () => number;
}

const DAY_MS = 86_400_000;

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export class DailyBudget {
  readonly cap: bigint;
  private readonly estimate: bigint;
  private readonly now: () => number;
  private day: string;
  private confirmedCount = 0;
  /** Paid today for the transactions of HCS-10 asks. */
  private askTinybar = 0n;
  /** Worst case of the HCS-10 asks in flight. */
  private openAskTinybar = 0n;
  /** Signals that may still each need a message: being evaluated, or journaled and not in a sent pack. */
  private openSignals = 0;
  /** Sent packs without a receipt. */
  private openPacks = 0;

  constructor(options: DailyBudgetOptions) {
    this.cap = options.capTinybar;
    this.estimate = options.estimateTinybar;
    this.now = options.now ?? Date.now;
    this.day = utcDay(this.now());
  }

  /** Messages confirmed today before this process started (read from the journals), and what its HCS-10 asks paid. */
  restore(confirmedToday: number, askTinybar = 0n): void {
    this.rollover();
    this.confirmedCount += confirmedToday;
    this.askTinybar += askTinybar;
  }

  /** Paid today for HCS-10 asks (kept in the watch state: no journal records them). */
  get askTinybarToday(): bigint {
    this.rollover();
    return this.askTinybar;
  }

  /** Messages confirmed today. */
  get confirmedToday(): number {
    this.rollover();
    return this.confirmedCount;
  }

  get spentTinybar(): bigint {
    this.rollover();
    return BigInt(this.confirmedCount) * this.estimate + this.askTinybar;
  }

  /** Spent plus the worst case of what is in flight. */
  get committedTinybar(): bigint {
    return this.spentTinybar + BigInt(this.openSignals + this.openPacks) * this.estimate + this.openAskTinybar;
  }

  /**
   * What a restarted cycle journaled and has not paid yet: its unpacked signals and its packs without a receipt, and
   * the worst case of the asks it still has to make.
   */
  carry(signals: number, packs: number, askTinybar = 0n): void {
    this.openSignals += signals;
    this.openPacks += packs;
    this.openAskTinybar += askTinybar;
  }

  /** Reserves `signals` and the worst case of asking (an agent about to be asked) when they fit under today's cap. */
  tryReserve(signals: number, askTinybar = 0n): boolean {
    if (this.committedTinybar + BigInt(signals) * this.estimate + askTinybar > this.cap) return false;
    this.openSignals += signals;
    this.openAskTinybar += askTinybar;
    return true;
  }

  /**
   * Reserved signals that will not be journaled (the evaluation was cut short or produced fewer), and an asking
   * reservation once the asks are over (what they paid was charged as it went).
   */
  release(signals: number, askTinybar = 0n): void {
    this.openSignals = Math.max(0, this.openSignals - signals);
    this.openAskTinybar = this.openAskTinybar > askTinybar ? this.openAskTinybar - askTinybar : 0n;
  }

  /** One transaction of an HCS-10 ask was submitted: the message price, plus the topic's HIP-991 fee if it has one. */
  chargeAsk(topicFeeTinybar = 0n): void {
    this.rollover();
    this.askTinybar += this.estimate + topicFeeTinybar;
  }

  /** A journaled pack now carries `signals` of the reserved ones: one message instead of up to `signals`. */
  packed(signals: number): void {
    this.openSignals = Math.max(0, this.openSignals - signals);
    this.openPacks++;
  }

  /** A sent pack was confirmed. */
  confirmed(): void {
    this.openPacks = Math.max(0, this.openPacks - 1);
    this.rollover();
    this.confirmedCount++;
  }

  /** Ms until 00:00 UTC, when the budget starts again. */
  msUntilNextDay(): number {
    const now = this.now();
    return DAY_MS - (now % DAY_MS);
  }

  get today(): string {
    this.rollover();
    return this.day;
  }

  private rollover(): void {
    const day = utcDay(this.now());
    if (day !== this.day) {
      this.day = day;
      this.confirmedCount = 0;
      this.askTinybar = 0n;
    }
  }
}
