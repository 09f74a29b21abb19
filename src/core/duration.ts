/** `90s`, `30m`, `24h`, `7d` or plain milliseconds: the one way hcs25 reads a duration, in flags and in config. */
export const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/;

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** The duration in ms, or undefined when the text is not one. */
export function durationMs(text: string): number | undefined {
  const m = DURATION.exec(text.trim());
  return m ? Math.round(Number(m[1]) * UNIT_MS[(m[2] ?? 'ms') as keyof typeof UNIT_MS]) : undefined;
}
