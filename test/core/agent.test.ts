/** Where an agent is asked: the rate limit of `watch` is per host, so two agents on one host share it. */
import { describe, expect, it } from 'vitest';
import { askHost } from '../../src/core/agent.js';

describe('askHost', () => {
  it('asks HTTP agents by host name and HCS-10 agents by inbound topic', () => {
    expect(askHost({ subject: 's', endpoint: 'https://Agent.Example:8443/v1' })).toBe('agent.example');
    expect(askHost({ subject: 's', inboundTopicId: '0.0.77' })).toBe('0.0.77');
  });
});
