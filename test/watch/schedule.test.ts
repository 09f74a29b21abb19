import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Agent } from '../../src/core/agent.js';
import { RegistryAgents } from '../../src/watch/agents.js';
import { Schedule, slotOf } from '../../src/watch/schedule.js';

const agent = (i: number, v = 0): Agent => ({
  subject: `uaid:aid:a${i};uid=0;registry=self;proto=openai;nativeId=a${i}.test.invalid`,
  name: `agent-${i}-v${v}`,
  protocol: 'openai',
  endpoint: `http://a${i}.test.invalid/v${v}`,
  model: 'm',
  source: 'hcs://2/0.0.1234',
  registrySeq: i,
});

describe('RegistryAgents', () => {
  it('holds each live agent by subject with the sequence of its last change, across updates and deletes', () => {
    const agents = new RegistryAgents();
    agents.set(agent(1), 1);
    agents.set(agent(2), 2);
    agents.set(agent(1, 1), 7);
    expect(agents.size).toBe(2);
    expect(agents.get(agent(1).subject)).toEqual(agent(1, 1));
    expect(agents.changedSeq(agent(1).subject)).toBe(7);
    expect(agents.delete(agent(2).subject)).toBe(true);
    expect(agents.delete(agent(2).subject)).toBe(false);
    expect(agents.has(agent(2).subject)).toBe(false);
    expect(agents.changedSeq(agent(2).subject)).toBeUndefined();
    agents.set(agent(3));
    expect(agents.changedSeq(agent(3).subject)).toBeUndefined();
    expect([...agents.keys()].sort()).toEqual([agent(1).subject, agent(3).subject].sort());
    expect([...agents.values()].map((a) => a.name).sort()).toEqual(['agent-1-v1', 'agent-3-v0']);
  });
});

describe('Schedule', () => {
  it('hands out every agent once, in slot order, as its slot comes; deleted agents are passed over', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string(), { maxLength: 60 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 8 }), fc.func(fc.boolean()), (subjects, steps, deleted) => {
        const schedule = new Schedule(subjects);
        const live = (s: string) => !deleted(s);
        const handed: string[] = [];
        let elapsed = 0;
        for (const step of [...steps].sort((a, b) => a - b)) {
          elapsed = step;
          for (const s of schedule.due(elapsed, live)) {
            expect(slotOf(s)).toBeLessThanOrEqual(elapsed);
            handed.push(s);
          }
        }
        // The slots already handed out, and those still to come, all live.
        handed.push(...schedule.due(1, live));
        const expected = subjects.filter(live).sort((a, b) => slotOf(a) - slotOf(b));
        expect(handed).toEqual(expected);
        expect([...schedule.due(1, live)]).toEqual([]);
      }),
      { numRuns: 200 },
    );
  });

  it('spreads slots evenly and keeps each agent at the same slot across restarts', () => {
    const slots = Array.from({ length: 4_000 }, (_, i) => slotOf(agent(i).subject));
    for (let q = 0; q < 4; q++) {
      const inQuarter = slots.filter((s) => s >= q / 4 && s < (q + 1) / 4).length;
      expect(inQuarter).toBeGreaterThan(800);
      expect(inQuarter).toBeLessThan(1_200);
    }
    expect(slotOf(agent(5).subject)).toBe(slots[5]);
  });
});
