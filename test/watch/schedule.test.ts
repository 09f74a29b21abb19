import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Schedule, slotOf } from '../../src/watch/schedule.js';

const subjectOf = (i: number) => `uaid:aid:a${i};uid=0;registry=self;proto=openai;nativeId=a${i}.test.invalid`;

describe('Schedule', () => {
  it('hands out every live agent once, in slot order, as its slot comes; deleted agents are passed over', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string(), { maxLength: 60 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }),
        fc.func(fc.boolean()),
        (subjects, steps, deleted) => {
          const schedule = new Schedule(subjects);
          const live = (s: string) => !deleted(s);
          const handed: string[] = [];
          for (const elapsed of [...steps].sort((a, b) => a - b)) {
            for (const s of schedule.due(elapsed, live)) {
              expect(slotOf(s)).toBeLessThanOrEqual(elapsed);
              handed.push(s);
            }
          }
          // At the cycle's end every live agent has had its slot.
          handed.push(...schedule.due(1, live));
          expect(handed).toEqual(subjects.filter(live).sort((a, b) => slotOf(a) - slotOf(b)));
          expect([...schedule.due(1, live)]).toEqual([]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('spreads slots evenly over the cycle and keeps each agent at the same slot across restarts', () => {
    const slots = Array.from({ length: 4_000 }, (_, i) => slotOf(subjectOf(i)));
    for (let q = 0; q < 4; q++) {
      const inQuarter = slots.filter((s) => s >= q / 4 && s < (q + 1) / 4).length;
      expect(inQuarter).toBeGreaterThan(800);
      expect(inQuarter).toBeLessThan(1_200);
    }
    expect(slotOf(subjectOf(5))).toBe(slots[5]);
  });
});
