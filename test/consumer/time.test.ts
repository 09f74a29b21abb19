import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoFromMs, parseIsoMs } from '../../src/consumer/time.js';

/** 1970 to 9999, and a little either side (those go to Date). */
const instant = fc.oneof(
  fc.integer({ min: 0, max: 253_402_300_799_999 }),
  fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
  fc.integer({ min: -100_000_000_000, max: 260_000_000_000_000 }),
);

describe('isoFromMs', () => {
  it('is toISOString, for instants in any order, repeated or of the same day', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(instant, fc.integer({ min: 0, max: 3 })), { maxLength: 40 }), (cases) => {
        for (const [ms, repeat] of cases) {
          // Repeats and neighbours of the same day go through the kept result and the kept date.
          for (const t of [ms, ms, ms + repeat, ms + repeat * 1000, ms - repeat * 3_600_000]) {
            expect(isoFromMs(t)).toBe(new Date(t).toISOString());
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('throws as Date does for what is not a time, and leaves fractions to Date', () => {
    expect(() => isoFromMs(Number.NaN)).toThrow(RangeError);
    expect(isoFromMs(1.5)).toBe(new Date(1.5).toISOString());
    expect(isoFromMs(0)).toBe('1970-01-01T00:00:00.000Z');
  });
});

describe('parseIsoMs', () => {
  it('is Date.parse for toISOString text, in any order of days', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 253_402_300_799_999 }), { maxLength: 40 }), (instants) => {
        for (const ms of instants) {
          const text = new Date(ms).toISOString();
          expect(parseIsoMs(text)).toBe(Date.parse(text));
          expect(parseIsoMs(text)).toBe(ms);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('is Date.parse for text one character away from that form (digits, separators, days past the 28th)', () => {
    const chars = fc.constantFrom(...'0123456789/:;?@-.TZ+ ');
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_999 }), fc.integer({ min: 0, max: 23 }), chars, (ms, at, c) => {
        const iso = new Date(ms).toISOString();
        const text = iso.slice(0, at) + c + iso.slice(at + 1);
        expect(Object.is(parseIsoMs(text), Date.parse(text))).toBe(true);
      }),
      { numRuns: 2000 },
    );
    for (const text of ['2026-02-30T00:00:00.000Z', '2026-13-01T00:00:00.000Z', '2026-11-21T24:00:00.000Z', '2026-11-21T10:00:00Z', '']) {
      expect(Object.is(parseIsoMs(text), Date.parse(text))).toBe(true);
    }
  });
});
