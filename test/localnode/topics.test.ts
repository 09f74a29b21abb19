/** Topic lifecycle rules: admin key on create/update/delete, immutable topics, HIP-991 HBAR fees (ephemeral ports). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccountBalanceQuery,
  CustomFixedFee,
  Hbar,
  PrivateKey,
  TopicCreateTransaction,
  TopicDeleteTransaction,
  TopicMessageSubmitTransaction,
  TopicUpdateTransaction,
  type Client,
  type TopicId,
} from '@hashgraph/sdk';
import type { LocalNode } from '../../src/localnode/index.js';
import { getJson, startEphemeral } from './helpers.js';

let node: LocalNode;
let client: Client;
const admin = PrivateKey.generateED25519();

async function receiptOf(
  p: Promise<{ getReceipt(c: Client): Promise<{ status: { toString(): string }; topicId: TopicId | null }> }>,
): Promise<{ status: string; topicId: TopicId | null }> {
  try {
    const r = await (await p).getReceipt(client);
    return { status: r.status.toString(), topicId: r.topicId };
  } catch (err) {
    const m = /contained error status (\w+)/.exec(String(err));
    if (m) return { status: m[1] ?? '', topicId: null };
    throw err;
  }
}

beforeAll(async () => {
  node = await startEphemeral();
  client = node.client();
});

afterAll(async () => {
  client?.close();
  await node?.stop();
});

describe('topic admin key', () => {
  it('requires the admin key to sign the create', async () => {
    expect((await receiptOf(new TopicCreateTransaction().setAdminKey(admin.publicKey).execute(client))).status).toBe(
      'INVALID_SIGNATURE',
    );
  });

  it('updates only with the admin key, and deletes with it', async () => {
    const { topicId } = await receiptOf(
      (
        await new TopicCreateTransaction()
          .setAdminKey(admin.publicKey)
          .setTopicMemo('v1')
          .freezeWith(client)
          .sign(admin)
      ).execute(client),
    );
    expect(
      (await receiptOf(new TopicUpdateTransaction().setTopicId(topicId!).setTopicMemo('hijack').execute(client)))
        .status,
    ).toBe('INVALID_SIGNATURE');
    const update = await new TopicUpdateTransaction()
      .setTopicId(topicId!)
      .setTopicMemo('v2')
      .freezeWith(client)
      .sign(admin);
    expect((await receiptOf(update.execute(client))).status).toBe('SUCCESS');
    expect((await getJson(`${node.mirrorRestUrl}/api/v1/topics/${topicId}`)).body.memo).toBe('v2');
    expect((await receiptOf(new TopicDeleteTransaction().setTopicId(topicId!).execute(client))).status).toBe(
      'INVALID_SIGNATURE',
    );
    const del = await new TopicDeleteTransaction().setTopicId(topicId!).freezeWith(client).sign(admin);
    expect((await receiptOf(del.execute(client))).status).toBe('SUCCESS');
    expect(
      (await receiptOf(new TopicMessageSubmitTransaction().setTopicId(topicId!).setMessage('gone').execute(client)))
        .status,
    ).toBe('INVALID_TOPIC_ID');
    expect((await getJson(`${node.mirrorRestUrl}/api/v1/topics/${topicId}`)).body.deleted).toBe(true);
  });

  it('a topic without an admin key cannot be updated or deleted', async () => {
    const { topicId } = await receiptOf(new TopicCreateTransaction().execute(client));
    expect(
      (await receiptOf(new TopicUpdateTransaction().setTopicId(topicId!).setTopicMemo('x').execute(client))).status,
    ).toBe('UNAUTHORIZED');
    expect((await receiptOf(new TopicDeleteTransaction().setTopicId(topicId!).execute(client))).status).toBe(
      'UNAUTHORIZED',
    );
  });
});

describe('HIP-991 fixed HBAR fees', () => {
  it('charges the submitter to the collector unless a fee-exempt key signs', async () => {
    const collector = node.accounts.find((a) => a.type === 'ED25519')!;
    const exempt = PrivateKey.generateED25519();
    const fee = new CustomFixedFee().setHbarAmount(new Hbar(2)).setFeeCollectorAccountId(collector.accountId);
    const { topicId } = await receiptOf(
      new TopicCreateTransaction().setCustomFees([fee]).setFeeExemptKeys([exempt.publicKey]).execute(client),
    );
    const balance = async (): Promise<number> =>
      (await new AccountBalanceQuery().setAccountId(collector.accountId).execute(client)).hbars.toTinybars().toNumber();
    const before = await balance();
    expect(
      (await receiptOf(new TopicMessageSubmitTransaction().setTopicId(topicId!).setMessage('paid').execute(client)))
        .status,
    ).toBe('SUCCESS');
    expect((await balance()) - before).toBe(2e8);
    const free = await new TopicMessageSubmitTransaction()
      .setTopicId(topicId!)
      .setMessage('exempt')
      .freezeWith(client)
      .sign(exempt);
    expect((await receiptOf(free.execute(client))).status).toBe('SUCCESS');
    expect((await balance()) - before).toBe(2e8);
    const rest = await getJson(`${node.mirrorRestUrl}/api/v1/topics/${topicId}`);
    expect(rest.body.custom_fees.fixed_fees).toEqual([
      { amount: 2e8, collector_account_id: collector.accountId, denominating_token_id: null },
    ]);
  });
});
