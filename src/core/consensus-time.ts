/** Mirror-node consensus timestamps (`seconds.nanoseconds`) as milliseconds and ISO text, and back. */

/** Milliseconds as a mirror-node `seconds.nanos`, rounded down so it never filters more than `since` does. */
export function msToConsensus(ms: number): string {
  const whole = Math.floor(ms);
  return `${Math.floor(whole / 1000)}.${String((whole % 1000) * 1_000_000).padStart(9, '0')}`;
}

/** A mirror-node consensus timestamp, `seconds.nanoseconds`. */
const CONSENSUS = /^(\d{1,12})(?:\.(\d{1,9}))?$/;

/** Milliseconds since the epoch of a consensus timestamp (nanoseconds truncated), or NaN when it is not one. */
export function consensusMs(timestamp: string): number {
  const m = CONSENSUS.exec(timestamp);
  if (!m) return Number.NaN;
  return Number(m[1]) * 1000 + Number((m[2] ?? '').padEnd(3, '0').slice(0, 3));
}

/** A consensus timestamp as ISO 8601 with milliseconds ('' when it is not one). */
export function consensusIso(timestamp: string): string {
  return isoOfMs(consensusMs(timestamp));
}

export function isoOfMs(ms: number): string {
  return Number.isFinite(ms) ? new Date(ms).toISOString() : '';
}

/** A consensus timestamp as nanoseconds since the epoch, exactly (two instants in one millisecond stay apart). */
export function consensusNanos(timestamp: string): bigint | undefined {
  const m = CONSENSUS.exec(timestamp);
  return m ? BigInt(m[1]!) * 1_000_000_000n + BigInt((m[2] ?? '').padEnd(9, '0')) : undefined;
}
