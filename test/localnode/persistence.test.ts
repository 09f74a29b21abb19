/** `stateDir`: a restart keeps accounts, topics, messages, balances and the running-hash chain. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AccountBalanceQuery, AccountCreateTransaction, Hbar, PrivateKey, TopicCreateTransaction, TopicInfoQuery, TopicMessageSubmitTransaction, type TopicId } from '@hashgraph/sdk';
import { getJson, startEphemeral } from './helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'hcs25-localnode-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('persistence', () => {
  it('restores the ledger from the state directory', async () => {
    const submitKey = PrivateKey.generateED25519();
    let topicId: TopicId;
    let hashBefore: string;
    let balanceBefore: string;
    let accountId: string;
    {
      const node = await startEphemeral({ stateDir: dir });
      const client = node.client();
      topicId = (await (await (await new TopicCreateTransaction().setTopicMemo('kept').setSubmitKey(submitKey.publicKey).freezeWith(client)).execute(client)).getReceipt(client)).topicId as TopicId;
      for (const text of ['one', 'two', 'x'.repeat(2000)]) {
        const tx = await new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage(text).freezeWith(client).sign(submitKey);
        await Promise.all((await tx.executeAll(client)).map((r) => r.getReceipt(client)));
      }
      const created = await (await new AccountCreateTransaction().setKeyWithoutAlias(PrivateKey.generateED25519().publicKey).setInitialBalance(new Hbar(3)).setAccountMemo('hcs-11:kept').execute(client)).getReceipt(client);
      accountId = created.accountId!.toString();
      hashBefore = Buffer.from((await new TopicInfoQuery().setTopicId(topicId).execute(client)).runningHash).toString('hex');
      // Let the paid TopicInfoQuery's payment reach consensus, then read the operator's balance from the mirror.
      await new AccountBalanceQuery().setAccountId('0.0.2').execute(client);
      balanceBefore = String((await getJson(`${node.mirrorRestUrl}/api/v1/accounts/0.0.2`)).body.balance.balance);
      client.close();
      await node.stop();
    }
    const node = await startEphemeral({ stateDir: dir });
    const client = node.client();
    try {
      // Balances are rebuilt by replaying every record's transfer list.
      expect(String((await getJson(`${node.mirrorRestUrl}/api/v1/accounts/0.0.2`)).body.balance.balance)).toBe(balanceBefore);
      const info = await new TopicInfoQuery().setTopicId(topicId).execute(client);
      expect(info.topicMemo).toBe('kept');
      expect(info.sequenceNumber.toNumber()).toBe(4);
      expect(Buffer.from(info.runningHash).toString('hex')).toBe(hashBefore);
      const account = await getJson(`${node.mirrorRestUrl}/api/v1/accounts/${accountId}`);
      expect(account.body).toMatchObject({ memo: 'hcs-11:kept', balance: { balance: 3e8 } });
      const page = await getJson(`${node.mirrorRestUrl}/api/v1/topics/${topicId}/messages`);
      expect(page.body.messages.map((m: { sequence_number: number }) => m.sequence_number)).toEqual([1, 2, 3, 4]);
      expect(page.body.messages[2].chunk_info).toMatchObject({ number: 1, total: 2 });
      const tx = await new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage('after restart').freezeWith(client).sign(submitKey);
      const receipt = await (await tx.execute(client)).getReceipt(client);
      expect(receipt.topicSequenceNumber?.toNumber()).toBe(5);
      const fresh = await (await new TopicCreateTransaction().execute(client)).getReceipt(client);
      expect(fresh.topicId!.num.toNumber()).toBeGreaterThan(topicId.num.toNumber());
    } finally {
      client.close();
      await node.stop();
    }
  });
});
