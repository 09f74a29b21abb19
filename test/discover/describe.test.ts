import { describe, expect, it } from 'vitest';
import { agentRecordSchema } from '../../src/discover/agent-record.js';
import { describeDocument, fromProfile } from '../../src/discover/describe.js';

describe('agentRecordSchema', () => {
  it('accepts HTTP and HCS-10 records and refuses incomplete ones', () => {
    expect(
      agentRecordSchema.safeParse({ name: 'calc-bot', protocol: 'a2a', endpoint: 'https://calc.example.com' }).success,
    ).toBe(true);
    expect(agentRecordSchema.safeParse({ name: 'h', protocol: 'hcs-10', accountId: '0.0.5' }).success).toBe(true);
    expect(agentRecordSchema.safeParse({ name: 'h', protocol: 'hcs-10', endpoint: 'https://x' }).success).toBe(false);
    expect(agentRecordSchema.safeParse({ name: 'x', protocol: 'openai', endpoint: 'ftp://x' }).success).toBe(false);
    expect(agentRecordSchema.safeParse({ name: 'x', protocol: 'smtp', endpoint: 'https://x' }).success).toBe(false);
    expect(
      agentRecordSchema.safeParse({ name: 'x', protocol: 'a2a', endpoint: 'https://x', uaid: 'not-a-uaid' }).success,
    ).toBe(false);
  });
});

describe('describeDocument', () => {
  it('reads an agent record', () => {
    expect(
      describeDocument({ name: 'calc-bot', protocol: 'openai', endpoint: 'http://127.0.0.1:9/v1', model: 'm1' }),
    ).toEqual({
      ok: true,
      description: {
        kind: 'agent-record',
        name: 'calc-bot',
        protocol: 'openai',
        endpoint: 'http://127.0.0.1:9/v1',
        model: 'm1',
      },
    });
    expect(describeDocument({ name: 'calc-bot', protocol: 'openai', endpoint: 42 })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^invalid agent record: endpoint/),
    });
  });

  it('reads an A2A card, preferring a JSON-RPC interface and a declared UAID', () => {
    const card = {
      name: 'Card Agent',
      url: 'https://agent.example.com/grpc',
      version: '2.0.0',
      preferredTransport: 'GRPC',
      additionalInterfaces: [{ url: 'https://agent.example.com/rpc', transport: 'JSONRPC' }],
      capabilities: {},
      skills: [],
      did: 'uaid:did:z6Mk;uid=0;proto=a2a',
    };
    expect(describeDocument(card)).toEqual({
      ok: true,
      description: {
        kind: 'a2a-card',
        name: 'Card Agent',
        protocol: 'a2a',
        endpoint: 'https://agent.example.com/rpc',
        uaid: 'uaid:did:z6Mk;uid=0;proto=a2a',
        version: '2.0.0',
      },
    });
  });

  it('reads HCS-11 profiles: inbound topic, endpoint hints, skills', () => {
    const base = {
      version: '1.0',
      type: 1,
      display_name: 'Profiled',
      inboundTopicId: '0.0.300',
      aiAgent: { type: 1, capabilities: [0, 17, 50, 120], model: 'gpt-x' },
    };
    expect(fromProfile(base, '0.0.200')).toEqual({
      ok: true,
      description: {
        kind: 'hcs-11-profile',
        name: 'Profiled',
        protocol: 'hcs-10',
        accountId: '0.0.200',
        inboundTopicId: '0.0.300',
        model: 'gpt-x',
        skills: [0, 17, 120],
      },
    });
    const hinted = describeDocument({
      ...base,
      properties: { endpoint: 'https://p.example.com/a2a', protocol: 'a2a' },
    });
    expect(hinted).toMatchObject({
      ok: true,
      description: { protocol: 'a2a', endpoint: 'https://p.example.com/a2a', inboundTopicId: '0.0.300' },
    });
    const mcp = describeDocument({
      version: '1.0',
      type: 2,
      display_name: 'Tools',
      mcpServer: { version: '2025-03-26', connectionInfo: { url: 'https://mcp.example.com/sse', transport: 'sse' } },
    });
    expect(mcp).toMatchObject({ ok: true, description: { protocol: 'mcp', endpoint: 'https://mcp.example.com/sse' } });
    expect(describeDocument({ version: '1.0', type: 1, display_name: 'Nowhere' })).toEqual({
      ok: false,
      reason: 'HCS-11 profile has neither an inboundTopicId nor an endpoint',
    });
    expect(describeDocument({ version: 1, type: 1, display_name: 'Bad' })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^invalid HCS-11 profile: version/),
    });
  });

  it('refuses endpoints and UAIDs carrying terminal escapes (printed by discover, published as subjects)', () => {
    const esc = 'https://agent.example.com/\u001b[2J';
    expect(describeDocument({ name: 'x', protocol: 'a2a', endpoint: esc })).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^invalid agent record: endpoint/),
    });
    expect(
      describeDocument({ name: 'x', protocol: 'a2a', endpoint: 'https://a.example.com/\u202eevil' }),
    ).toMatchObject({ ok: false });
    expect(
      describeDocument({
        name: 'x',
        protocol: 'a2a',
        endpoint: 'https://a.example.com',
        uaid: 'uaid:aid:x\u001b[2Jy;uid=0',
      }),
    ).toEqual({
      ok: false,
      reason: 'invalid agent record: uaid: contains control characters',
    });
    // A card's declared id and a profile's hint are dropped rather than used.
    const card = describeDocument({ name: 'Card', url: 'https://c.example.com', uaid: 'uaid:aid:x\u001b[31m;uid=0' });
    expect(card).toEqual({
      ok: true,
      description: { kind: 'a2a-card', name: 'Card', protocol: 'a2a', endpoint: 'https://c.example.com' },
    });
    expect(describeDocument({ name: 'Card', url: esc })).toMatchObject({ ok: false });
    const profile = describeDocument({
      version: '1.0',
      type: 1,
      display_name: 'P',
      inboundTopicId: '0.0.300',
      properties: { a2a: esc },
    });
    expect(profile).toMatchObject({ ok: true, description: { protocol: 'hcs-10' } });
    expect(profile.ok && profile.description.endpoint).toBe(undefined);
  });

  it('says what an unrecognised document looks like', () => {
    expect(describeDocument({ foo: 1, bar: 2 })).toEqual({
      ok: false,
      reason: 'document is not an agent record, an A2A agent card or an HCS-11 profile (keys: foo, bar)',
    });
  });
});
