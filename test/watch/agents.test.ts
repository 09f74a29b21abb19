import { describe, expect, it } from 'vitest';
import type { Agent } from '../../src/core/agent.js';
import { RegistryAgents } from '../../src/watch/agents.js';

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
