import { describe, expect, it } from 'vitest';
import { buildAgentProfile, hcs11AccountMemo } from '../../src/hcs10/profile.js';
import { classifyInbound, describeAccess } from '../../src/hcs10/inbound.js';
import type { TopicInfo } from '../../src/hedera/mirror-rest.js';
import { parseHcs11Memo } from '../../src/discover/hcs11.js';
import { fromProfile } from '../../src/discover/describe.js';

describe('HCS-11 profile', () => {
  const profile = buildAgentProfile({
    displayName: 'calc',
    inboundTopicId: '0.0.11',
    outboundTopicId: '0.0.12',
    bio: 'adds numbers',
    capabilities: [0, 7],
    model: 'm1',
  });

  it('passes the standards-sdk AI agent profile schema', async () => {
    // Declared locally: the SDK's bundled .d.ts re-exports cannot be followed under NodeNext.
    type Schema = { safeParse(v: unknown): { success: boolean; error?: { issues: unknown[] } } };
    const { AIAgentProfileSchema } = (await import('@hashgraphonline/standards-sdk')) as unknown as {
      AIAgentProfileSchema: Schema;
    };
    const parsed = AIAgentProfileSchema.safeParse(profile);
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
  });

  it('is read back by discovery as an HCS-10 agent with its inbound topic', () => {
    const described = fromProfile(profile, '0.0.10');
    expect(described).toMatchObject({
      ok: true,
      description: { name: 'calc', protocol: 'hcs-10', inboundTopicId: '0.0.11' },
    });
    expect(parseHcs11Memo(hcs11AccountMemo('0.0.13'))).toBe('hcs://1/0.0.13');
  });
});

function topic(extra: Partial<TopicInfo>): TopicInfo {
  return { topic_id: '0.0.11', memo: 'hcs-10:0:60:0:0.0.10', ...extra } as TopicInfo;
}

describe('inbound topic access', () => {
  const mine = 'ab'.repeat(32);

  it('no submit key and no fees: public', () => {
    expect(classifyInbound(topic({ submit_key: null, custom_fees: { fixed_fees: [] } }))).toEqual({ kind: 'public' });
    expect(classifyInbound(topic({}))).toEqual({ kind: 'public' });
  });

  it('a submit key: controlled, ours only when it is exactly our key', () => {
    expect(classifyInbound(topic({ submit_key: { _type: 'ED25519', key: 'cd'.repeat(32) } }), mine)).toEqual({
      kind: 'controlled',
      ours: false,
    });
    expect(classifyInbound(topic({ submit_key: { _type: 'ED25519', key: mine.toUpperCase() } }), mine)).toEqual({
      kind: 'controlled',
      ours: true,
    });
    expect(classifyInbound(topic({ submit_key: { _type: 'ProtobufEncoded', key: mine } }), mine)).toEqual({
      kind: 'controlled',
      ours: false,
    });
  });

  it('HIP-991 fixed fees: fee-gated, HBAR summed, token fees counted', () => {
    const access = classifyInbound(
      topic({
        custom_fees: {
          fixed_fees: [
            { amount: 50_000_000, collector_account_id: '0.0.10', denominating_token_id: null },
            { amount: '25000000', collector_account_id: '0.0.9' },
            { amount: 3, collector_account_id: '0.0.9', denominating_token_id: '0.0.77' },
          ],
        },
      }),
    );
    expect(access).toEqual({
      kind: 'fee',
      hbarTinybars: 75_000_000,
      tokenFees: 1,
      collectors: ['0.0.10', '0.0.9', '0.0.9'],
    });
    expect(describeAccess(access)).toMatch(/0\.75 ℏ and 1 token fee/);
  });

  it('garbage in custom_fees is not a fee', () => {
    expect(classifyInbound(topic({ custom_fees: 'free!' }))).toEqual({ kind: 'public' });
  });
});
