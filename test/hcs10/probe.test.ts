import type { Client } from '@hashgraph/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import type { Hcs10Identity } from '../../src/hcs10/identity.js';
import { createHcs10Transport } from '../../src/evaluate/transports/hcs10.js';
import { FakeMirror } from '../discover/fake-mirror.js';

let mirror: FakeMirror;
let client: MirrorRestClient;

beforeAll(async () => {
  mirror = await new FakeMirror().start();
  client = new MirrorRestClient({ baseUrl: mirror.url, minBackoffMs: 1, maxBackoffMs: 5, retries: 0 });
});
afterAll(async () => {
  await client.close();
  await mirror.stop();
});

/** probe() reads only the mirror node and the operator's public key. */
const ledger = { operatorPublicKey: null } as unknown as Client;
const identity = {} as Hcs10Identity;

describe('HCS-10 probe', () => {
  it('probes the inbound topic a registration named when the account has no profile', async () => {
    const inbound = mirror.createTopic('hcs-10:0:60:0:0.0.6101', { submit: false });
    mirror.accounts.set('0.0.6101', { memo: '' });
    const agent = {
      subject: 'uaid:aid:x',
      name: 'bare',
      protocol: 'hcs-10' as const,
      accountId: '0.0.6101',
      inboundTopicId: inbound,
    };
    const probe = await createHcs10Transport(agent, { client: ledger, identity, mirror: client }).probe({
      budgetMs: 5_000,
    });
    expect(probe).toMatchObject({ reachable: true, reason: 'public inbound topic' });

    // With neither a profile nor a named inbound topic there is nothing to probe.
    const { inboundTopicId: _, ...noInbound } = agent;
    const none = await createHcs10Transport(noInbound, { client: ledger, identity, mirror: client }).probe({
      budgetMs: 5_000,
    });
    expect(none).toMatchObject({ reachable: false, reason: 'account 0.0.6101 has no HCS-11 profile (memo hcs-11:…)' });

    // The named topic must still be the account's inbound topic.
    const foreign = mirror.createTopic('hcs-10:0:60:0:0.0.6999', { submit: false });
    const wrong = await createHcs10Transport(
      { ...agent, inboundTopicId: foreign },
      { client: ledger, identity, mirror: client },
    ).probe({ budgetMs: 5_000 });
    expect(wrong).toMatchObject({
      reachable: false,
      reason: `topic ${foreign} is not the HCS-10 inbound topic of 0.0.6101`,
    });
  });
});
