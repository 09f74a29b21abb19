/**
 * Fee accounting for a run: a forecast before it starts, and during it a meter that measures what was really paid
 * (from the operator's balance, a free query) and refuses to start a submission that could pass `--max-fee-hbar`.
 *
 * Why the balance and not records: a receipt carries no fee, and a record query is itself paid (about as much as
 * the submission), which would double the cost of a run. The balance also counts what a failed transaction cost.
 * It over-counts when something else spends from the same account during the run, which errs on the safe side.
 */
import { z } from 'zod';
import { Hcs25Error } from '../core/errors.js';
import type { LedgerName } from '../config/networks.js';
import type { MirrorRestClient } from '../hedera/mirror-rest.js';
import type { PackMode } from '../format/pack.js';

export const TINYBARS_PER_HBAR = 100_000_000n;

/**
 * What one ConsensusSubmitMessage costs, USD, per network: $0.0008 on Hedera from January 2026 (fee schedule of
 * release v0.69; a message of up to 1 KiB with one signature), and the emulator's flat $0.0001 (localnode/fees.ts).
 * The forecast is exact for these prices at the mirror node's exchange rate; the meter then measures what was paid.
 */
export const SUBMIT_USD: Readonly<Record<LedgerName, number>> = {
  local: 0.0001,
  testnet: 0.0008,
  previewnet: 0.0008,
  mainnet: 0.0008,
  custom: 0.0008,
};
/** Fallback USD per hbar when the mirror node has no exchange rate: low, so the forecast errs high. */
const FALLBACK_CENTS_PER_HBAR: Record<LedgerName, number> = {
  local: 12,
  testnet: 5,
  previewnet: 5,
  mainnet: 5,
  custom: 5,
};
/** Upper bound a single submission may charge (its `maxTransactionFee`): far above the normal price, far below the SDK's 2 ℏ default. */
export const MAX_SUBMIT_FEE_TINYBAR = 10_000_000n; // 0.1 ℏ

export class FeeCapError extends Hcs25Error {
  constructor(message: string, hint: string) {
    super('FEE_CAP', message, { hint });
    this.name = 'FeeCapError';
  }
}

export function hbarToTinybar(hbar: number): bigint {
  return BigInt(Math.round(hbar * 1e8));
}

export function formatHbar(tinybar: bigint): string {
  const negative = tinybar < 0n;
  const abs = negative ? -tinybar : tinybar;
  const whole = abs / TINYBARS_PER_HBAR;
  const frac = (abs % TINYBARS_PER_HBAR).toString().padStart(8, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${frac ? `.${frac}` : ''} ℏ`;
}

const exchangeRateSchema = z.object({
  current_rate: z.object({ cent_equivalent: z.number().positive(), hbar_equivalent: z.number().positive() }),
});

/** Estimated fee of one message submission, tinybars, at the mirror node's current exchange rate when it has one. */
export async function estimateSubmitFee(
  ledger: LedgerName,
  mirror?: MirrorRestClient,
): Promise<{ tinybar: bigint; source: 'mirror' | 'default' }> {
  let centsPerHbar = FALLBACK_CENTS_PER_HBAR[ledger];
  let source: 'mirror' | 'default' = 'default';
  if (mirror) {
    try {
      const parsed = exchangeRateSchema.safeParse(await mirror.getJson('/api/v1/network/exchangerate'));
      if (parsed.success) {
        centsPerHbar = parsed.data.current_rate.cent_equivalent / parsed.data.current_rate.hbar_equivalent;
        source = 'mirror';
      }
    } catch {
      // An estimate only: the meter measures the real cost once the run is going.
    }
  }
  // Rounded as the network converts fees (to the nearest tinybar).
  const tinybar = BigInt(Math.round(((SUBMIT_USD[ledger] * 100) / centsPerHbar) * 1e8));
  return { tinybar, source };
}

/**
 * Signals a format-3 message carries at least, for forecasts (`json`: two subjects of three signals with short UAIDs,
 * fewer with ~120-140 characters or wrong answers; `dense`: deflated, in base64). Short runs, flush timers and long
 * gaps between results give fewer.
 */
export const JSON_SIGNALS_PER_MESSAGE = 5;
export const DENSE_SIGNALS_PER_MESSAGE = 7;

/** Messages a run of `agents` × `evals` signals is expected to take in a pack mode (no mode: a v1 run, one per signal). */
export function expectedMessages(agents: number, evals: number, pack: PackMode | undefined): number {
  if (agents === 0 || evals === 0) return 0;
  if (pack === 'dense') return Math.ceil((agents * evals) / DENSE_SIGNALS_PER_MESSAGE);
  if (pack === 'json') return Math.ceil((agents * evals) / JSON_SIGNALS_PER_MESSAGE);
  if (pack === 'subject') return agents;
  return agents * evals;
}

/**
 * The forecast a run prints before it starts, and its refusal when the forecast passes the cap: messages (from the
 * pack mode) × the estimated price of one. The refusal names the flag and a cap that fits (the forecast + 25%).
 */
export function feeForecast(
  agents: number,
  evals: number,
  pack: PackMode | undefined,
  estimate: bigint,
  capHbar: number,
): { messages: number; tinybar: bigint; over: boolean; line: string; refusal: FeeCapError } {
  const messages = expectedMessages(agents, evals, pack);
  const tinybar = BigInt(messages) * estimate;
  const cap = hbarToTinybar(capHbar);
  const packing =
    pack === 'dense'
      ? `dense, ${DENSE_SIGNALS_PER_MESSAGE} signals per message`
      : pack === 'json'
        ? `json, ${JSON_SIGNALS_PER_MESSAGE} signals per message`
        : pack === 'subject'
          ? 'one per agent'
          : 'one per signal';
  const line = `fee forecast: ${agents} agent${agents === 1 ? '' : 's'} × ${evals} eval${evals === 1 ? '' : 's'} → about ${messages} message${messages === 1 ? '' : 's'} (${packing}) at ~${formatHbar(estimate)} each = ${formatHbar(tinybar)}; cap ${formatHbar(cap)} (--max-fee-hbar)`;
  const fits = (tinybar * 5n + 3n) / 4n;
  const suggestion = Math.ceil(Number(fits) / 1e8);
  const refusal = new FeeCapError(
    `about ${messages} messages at an estimated ${formatHbar(estimate)} each come to ${formatHbar(tinybar)}, more than --max-fee-hbar ${capHbar}`,
    `to run them all pass --max-fee-hbar ${suggestion} (the forecast + 25%), or evaluate fewer agents or evals; --dry-run shows the messages first`,
  );
  return { messages, tinybar, over: tinybar > cap, line, refusal };
}

export interface FeeMeterOptions {
  capTinybar: bigint;
  /** Per-submission estimate until the run has measured its own. */
  estimateTinybar: bigint;
  /** Paid by earlier attempts of this run (from the journal). */
  spentBefore?: bigint;
  /** The operator's balance now, tinybars. `final` asks for persistence (the last measurement of a run); periodic ones should fail fast. */
  balance: (final: boolean) => Promise<bigint>;
  /** Measure the balance this often while submissions are in flight. Default 2 s. */
  sampleEveryMs?: number;
  /** Called after each measurement (the run journals it). */
  onSample?: (spentTinybar: bigint, confirmed: number) => void;
}

export class FeeMeter {
  private readonly cap: bigint;
  private estimate: bigint;
  private readonly spentBefore: bigint;
  private baseline: bigint | undefined;
  private measured = 0n;
  /** Submissions that have an id but no outcome yet. */
  private inflight = 0;
  /** Confirmed since the last measurement: counted at the estimate until measured. */
  private unmeasured = 0;
  private confirmedTotal = 0;
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> | undefined;

  constructor(private readonly options: FeeMeterOptions) {
    this.cap = options.capTinybar;
    this.estimate = options.estimateTinybar;
    this.spentBefore = options.spentBefore ?? 0n;
  }

  /** Takes the starting balance and starts measuring. */
  async begin(): Promise<void> {
    this.baseline = await this.options.balance(true);
    this.timer = setInterval(() => void this.sample(), this.options.sampleEveryMs ?? 2_000);
    this.timer.unref();
  }

  /** Fees paid by the run so far (measured, plus confirmed-but-not-yet-measured at the estimate). */
  get spentTinybar(): bigint {
    return this.spentBefore + this.measured + BigInt(this.unmeasured) * this.estimate;
  }

  get estimateTinybar(): bigint {
    return this.estimate;
  }

  /**
   * Claims room for one more submission and returns the most it may be charged (its `maxTransactionFee`): the
   * per-transaction ceiling, lowered to what is left under the cap. Throws FeeCapError when the forecast — paid so
   * far plus every submission in flight at the estimate — would pass the cap.
   */
  reserve(): bigint {
    const room = this.cap - this.spentTinybar - BigInt(this.inflight) * this.estimate;
    if (room < this.estimate) {
      throw new FeeCapError(
        `the run has paid ${formatHbar(this.spentTinybar)} with ${this.inflight} submissions in flight; one more could pass the cap of ${formatHbar(this.cap)} (--max-fee-hbar)`,
        'raise --max-fee-hbar and resume the run; nothing unsent is lost',
      );
    }
    this.inflight++;
    return room < MAX_SUBMIT_FEE_TINYBAR ? room : MAX_SUBMIT_FEE_TINYBAR;
  }

  /** The reserved submission reached consensus. */
  confirm(): void {
    this.inflight = Math.max(0, this.inflight - 1);
    this.unmeasured++;
    this.confirmedTotal++;
  }

  /** The reserved submission ended without being confirmed (stopped, or failed at consensus: the balance tells its cost). */
  release(): void {
    this.inflight = Math.max(0, this.inflight - 1);
  }

  /** Measures the balance now; failures keep the estimate (the next sample tries again). */
  sample(final = false): Promise<void> {
    if (this.baseline === undefined) return Promise.resolve();
    this.sampling ??= (async () => {
      try {
        const unmeasuredAtStart = this.unmeasured;
        const confirmedAtStart = this.confirmedTotal;
        const now = await this.options.balance(final);
        const measured = this.baseline! - now;
        this.measured = measured > 0n ? measured : 0n;
        this.unmeasured -= unmeasuredAtStart;
        if (confirmedAtStart > 0 && this.measured > 0n) {
          // Calibrate from what this run really paid, rounded up so the forecast keeps erring high.
          const observed = (this.measured + BigInt(confirmedAtStart) - 1n) / BigInt(confirmedAtStart);
          this.estimate = observed > 0n ? observed : this.estimate;
        }
        this.options.onSample?.(this.spentTinybar, this.confirmedTotal);
      } catch {
        // Keep the estimate; balance queries are best effort.
      } finally {
        this.sampling = undefined;
      }
    })();
    return this.sampling;
  }

  /** Stops the timer and takes a final measurement. */
  async end(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sampling;
    await this.sample(true);
  }
}
