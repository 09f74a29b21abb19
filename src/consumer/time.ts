/** Mirror-node consensus timestamps (`"seconds.nanoseconds"`) as milliseconds and ISO strings, without floating point. */

const CONSENSUS = /^(\d{1,12})(?:\.(\d{1,9}))?$/;

/** Milliseconds since the epoch (nanoseconds truncated), or NaN when the value is not a consensus timestamp. */
export function consensusMs(timestamp: string): number {
  const m = CONSENSUS.exec(timestamp);
  if (!m) return Number.NaN;
  return Number(m[1]) * 1000 + Math.floor(Number((m[2] ?? '0').padEnd(9, '0')) / 1_000_000);
}

export function consensusIso(timestamp: string): string {
  const ms = consensusMs(timestamp);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : '';
}

/** Parses a user-given point in time: ISO 8601, or a consensus timestamp. */
export function parseInstant(value: string | Date): number {
  if (value instanceof Date) return value.getTime();
  if (CONSENSUS.test(value)) return consensusMs(value);
  return Date.parse(value);
}
