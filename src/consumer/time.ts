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
  return consensusIsoOfMs(consensusMs(timestamp));
}

/** {@link consensusIso} of a consensus time already parsed ('' for NaN). */
export function consensusIsoOfMs(ms: number): string {
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
 * same RangeError for an invalid time, which like anything outside 1970–9999 or fractional goes to Date. The date
 * part is worked out once per day, and recent results are kept by instant (`ISO_SLOTS`): a report's instants repeat
 * (a run's signals, a pack's consensus time, neighbouring subjects' runs), and a repeated instant then shares its
 * string, which is one string less for a report of a registry to build and for the GC to copy.
 */
export function isoFromMs(ms: number): string {
  // Multiplicative hashing of the low 32 bits: instants in whole seconds (multiples of 1000) spread over every slot.
  const slot = Math.imul(ms | 0, 0x9e3779b1) >>> (32 - ISO_SLOT_BITS);
  if (ms === isoMs[slot]) return isoText[slot]!;
  if (!(ms >= 0 && ms < ISO_LIMIT_MS) || !Number.isInteger(ms)) return new Date(ms).toISOString();
  const days = Math.floor(ms / DAY_MS);
  if (days !== iso.days) {
    civilFromDays(days);
    const { year, month, day } = civil;
    iso.days = days;
    iso.y0 = 48 + (Math.floor(year / 1000) % 10);
    iso.y1 = 48 + (Math.floor(year / 100) % 10);
    iso.y2 = 48 + (Math.floor(year / 10) % 10);
    iso.y3 = 48 + (year % 10);
    iso.m0 = 48 + Math.floor(month / 10);
    iso.m1 = 48 + (month % 10);
    iso.d0 = 48 + Math.floor(day / 10);
    iso.d1 = 48 + (day % 10);
  }
  let rest = ms - days * DAY_MS;
  const h = Math.floor(rest / 3_600_000);
  rest -= h * 3_600_000;
  const m = Math.floor(rest / 60_000);
  rest -= m * 60_000;
  const s = Math.floor(rest / 1000);
  const milli = rest - s * 1000;
  const centi = Math.floor(milli / 10);
  // prettier-ignore
  const text = String.fromCharCode(
    iso.y0, iso.y1, iso.y2, iso.y3, 45, iso.m0, iso.m1, 45, iso.d0, iso.d1, 84,
    48 + Math.floor(h / 10), 48 + (h % 10), 58, 48 + Math.floor(m / 10), 48 + (m % 10), 58, 48 + Math.floor(s / 10), 48 + (s % 10), 46,
    48 + Math.floor(centi / 10), 48 + (centi % 10), 48 + (milli % 10), 90,
  );
  isoMs[slot] = ms;
  isoText[slot] = text;
  return text;
}

/** isoFromMs's kept results: 4,096 instants (about 200 kB), by a hash of the instant; NaN marks an empty slot. */
const ISO_SLOT_BITS = 12;
const isoMs = new Float64Array(1 << ISO_SLOT_BITS).fill(Number.NaN);
const isoText = new Array<string>(1 << ISO_SLOT_BITS).fill('');

/** The character codes of isoFromMs's last day's date. */
const iso = { days: -1, y0: 0, y1: 0, y2: 0, y3: 0, m0: 0, m1: 0, d0: 0, d1: 0 };

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
 * goes to Date.parse, so the result is always Date.parse's. The digits are checked all at once (each d − 48 in
 * [0, 9]: no sign bit in their OR, the sign bit in every d − 58), and a day's number is worked out once per day.
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
  const y0 = text.charCodeAt(0) - 48;
  const y1 = text.charCodeAt(1) - 48;
  const y2 = text.charCodeAt(2) - 48;
  const y3 = text.charCodeAt(3) - 48;
  const mo0 = text.charCodeAt(5) - 48;
  const mo1 = text.charCodeAt(6) - 48;
  const d0 = text.charCodeAt(8) - 48;
  const d1 = text.charCodeAt(9) - 48;
  const h0 = text.charCodeAt(11) - 48;
  const h1 = text.charCodeAt(12) - 48;
  const mi0 = text.charCodeAt(14) - 48;
  const mi1 = text.charCodeAt(15) - 48;
  const s0 = text.charCodeAt(17) - 48;
  const s1 = text.charCodeAt(18) - 48;
  const ms0 = text.charCodeAt(20) - 48;
  const ms1 = text.charCodeAt(21) - 48;
  const ms2 = text.charCodeAt(22) - 48;
  const any = y0 | y1 | y2 | y3 | mo0 | mo1 | d0 | d1 | h0 | h1 | mi0 | mi1 | s0 | s1 | ms0 | ms1 | ms2;
  // prettier-ignore
  const all = (y0 - 10) & (y1 - 10) & (y2 - 10) & (y3 - 10) & (mo0 - 10) & (mo1 - 10) & (d0 - 10) & (d1 - 10) & (h0 - 10) &
    (h1 - 10) & (mi0 - 10) & (mi1 - 10) & (s0 - 10) & (s1 - 10) & (ms0 - 10) & (ms1 - 10) & (ms2 - 10);
  if (any < 0 || all >= 0) return Date.parse(text);
  const month = mo0 * 10 + mo1;
  const day = d0 * 10 + d1;
  const h = h0 * 10 + h1;
  const m = mi0 * 10 + mi1;
  const s = s0 * 10 + s1;
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= 28 && h <= 23 && m <= 59 && s <= 59)) return Date.parse(text);
  const date = ((y0 * 1000 + y1 * 100 + y2 * 10 + y3) * 16 + month) * 32 + day;
  if (date !== parsed.date) {
    parsed.date = date;
    parsed.days = daysFromCivil(y0 * 1000 + y1 * 100 + y2 * 10 + y3, month, day);
  }
  return parsed.days * DAY_MS + ((h * 60 + m) * 60 + s) * 1000 + ms0 * 100 + ms1 * 10 + ms2;
}

/** parseIsoMs's last date (year, month, day packed) and its day number. */
const parsed = { date: -1, days: 0 };
