/** Mirror-node consensus timestamps (`"seconds.nanoseconds"`) as milliseconds and ISO strings, without floating point. */

const CONSENSUS = /^(\d{1,12})(?:\.(\d{1,9}))?$/;

/**
 * Milliseconds since the epoch (nanoseconds truncated), or NaN when the value is not a consensus timestamp
 * (`CONSENSUS`). Scanned by hand: scoring parses one per signal, and this is several times faster than the regex.
 */
export function consensusMs(timestamp: string): number {
  const n = timestamp.length;
  let seconds = 0;
  let i = 0;
  for (; i < n; i++) {
    const d = timestamp.charCodeAt(i) - 48;
    if (d < 0 || d > 9) break;
    seconds = seconds * 10 + d;
  }
  if (i === 0 || i > 12) return Number.NaN;
  if (i === n) return seconds * 1000;
  if (timestamp.charCodeAt(i) !== 46 /* . */ || n - i - 1 < 1 || n - i - 1 > 9) return Number.NaN;
  // The first three fraction digits are the milliseconds; the rest must still be digits.
  let ms = 0;
  for (let k = i + 1, place = 0; k < n; k++, place++) {
    const d = timestamp.charCodeAt(k) - 48;
    if (d < 0 || d > 9) return Number.NaN;
    if (place < 3) ms += d * (place === 0 ? 100 : place === 1 ? 10 : 1);
  }
  return seconds * 1000 + ms;
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

const DAY_MS = 86_400_000;
/** Before 10000-01-01: where `toISOString` uses four-digit years. */
const ISO_LIMIT_MS = 253_402_300_800_000;

/**
 * `new Date(ms).toISOString()` by arithmetic, as one flat string (a template literal would keep a tree of pieces
 * alive): scores format several instants per subject, and toISOString costs microseconds. Identical output, and the
 * same RangeError for an invalid time, which like anything outside 1970–9999 or fractional goes to Date.
 */
export function isoFromMs(ms: number): string {
  if (!(ms >= 0 && ms < ISO_LIMIT_MS) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  civilFromDays(days);
  const { year, month, day } = civil;
  let rest = ms - days * DAY_MS;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  const milli = rest - s * 1000;
  const d = (n: number, place: number): number => 48 + (Math.floor(n / place) % 10);
  // prettier-ignore
  return String.fromCharCode(
    d(year, 1000), d(year, 100), d(year, 10), d(year, 1), 45, d(month, 10), d(month, 1), 45, d(day, 10), d(day, 1), 84,
    d(h, 10), d(h, 1), 58, d(m, 10), d(m, 1), 58, d(s, 10), d(s, 1), 46, d(milli, 100), d(milli, 10), d(milli, 1), 90,
  );
}

/** civilFromDays's result: one object reused, as isoFromMs is called in hot loops. */
const civil = { year: 0, month: 0, day: 0 };

/** Proleptic Gregorian date of a day number (days since 1970-01-01, ≥ 0) into `civil`, after H. Hinnant's `civil_from_days`. */
function civilFromDays(days: number): void {
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  civil.year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  civil.month = month;
  civil.day = day;
}

/** Day number (since 1970-01-01) of a proleptic Gregorian date, after H. Hinnant's `days_from_civil`. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468;
}

/**
 * `Date.parse(text)`, fast for the form `toISOString` writes (`2026-11-21T10:00:00.000Z`, as signals carry their
 * fetchedAt): scoring parses one per signal. Anything else, or a day past the 28th (Date.parse rolls those over),
 * goes to Date.parse, so the result is always Date.parse's.
 */
export function parseIsoMs(text: string): number {
  if (
    text.length !== 24 ||
    text.charCodeAt(4) !== 45 /* - */ ||
    text.charCodeAt(7) !== 45 ||
    text.charCodeAt(10) !== 84 /* T */ ||
    text.charCodeAt(13) !== 58 /* : */ ||
    text.charCodeAt(16) !== 58 ||
    text.charCodeAt(19) !== 46 /* . */ ||
    text.charCodeAt(23) !== 90 /* Z */
  ) {
    return Date.parse(text);
  }
  const year = digits(text, 0, 4);
  const month = digits(text, 5, 2);
  const day = digits(text, 8, 2);
  const h = digits(text, 11, 2);
  const m = digits(text, 14, 2);
  const s = digits(text, 17, 2);
  const ms = digits(text, 20, 3);
  if (!(year >= 0 && month >= 1 && month <= 12 && day >= 1 && day <= 28 && h >= 0 && h <= 23 && m >= 0 && m <= 59 && s >= 0 && s <= 59 && ms >= 0)) {
    return Date.parse(text);
  }
  return daysFromCivil(year, month, day) * DAY_MS + ((h * 60 + m) * 60 + s) * 1000 + ms;
}

/** The decimal number in text[from, from + length), or -1 if any of it is not a digit. */
function digits(text: string, from: number, length: number): number {
  let value = 0;
  for (let i = from; i < from + length; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    value = value * 10 + d;
  }
  return value;
}
