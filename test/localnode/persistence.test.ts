/** `stateDir`: a restart keeps accounts, topics, messages, balances and the running-hash chain. */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  AccountBalanceQuery,
  AccountCreateTransaction,
  Hbar,
  PrecheckStatusError,
  PrivateKey,
  TopicCreateTransaction,
  TopicInfoQuery,
  TopicMessageSubmitTransaction,
  TransactionId,
  TransactionReceiptQuery,
  type TopicId,
} from '@hashgraph/sdk';
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
      topicId = (
        await (
          await (
            await new TopicCreateTransaction().setTopicMemo('kept').setSubmitKey(submitKey.publicKey).freezeWith(client)
          ).execute(client)
        ).getReceipt(client)
      ).topicId as TopicId;
      for (const text of ['one', 'two', 'x'.repeat(2000)]) {
        const tx = await new TopicMessageSubmitTransaction()
          .setTopicId(topicId)
          .setMessage(text)
          .freezeWith(client)
          .sign(submitKey);
        await Promise.all((await tx.executeAll(client)).map((r) => r.getReceipt(client)));
      }
      const created = await (
        await new AccountCreateTransaction()
          .setKeyWithoutAlias(PrivateKey.generateED25519().publicKey)
          .setInitialBalance(new Hbar(3))
          .setAccountMemo('hcs-11:kept')
          .execute(client)
      ).getReceipt(client);
      accountId = created.accountId!.toString();
      hashBefore = Buffer.from((await new TopicInfoQuery().setTopicId(topicId).execute(client)).runningHash).toString(
        'hex',
      );
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
      expect(String((await getJson(`${node.mirrorRestUrl}/api/v1/accounts/0.0.2`)).body.balance.balance)).toBe(
        balanceBefore,
      );
      const info = await new TopicInfoQuery().setTopicId(topicId).execute(client);
      expect(info.topicMemo).toBe('kept');
      expect(info.sequenceNumber.toNumber()).toBe(4);
      expect(Buffer.from(info.runningHash).toString('hex')).toBe(hashBefore);
      const account = await getJson(`${node.mirrorRestUrl}/api/v1/accounts/${accountId}`);
      expect(account.body).toMatchObject({ memo: 'hcs-11:kept', balance: { balance: 3e8 } });
      const page = await getJson(`${node.mirrorRestUrl}/api/v1/topics/${topicId}/messages`);
      expect(page.body.messages.map((m: { sequence_number: number }) => m.sequence_number)).toEqual([1, 2, 3, 4]);
      expect(page.body.messages[2].chunk_info).toMatchObject({ number: 1, total: 2 });
      const tx = await new TopicMessageSubmitTransaction()
        .setTopicId(topicId)
        .setMessage('after restart')
        .freezeWith(client)
        .sign(submitKey);
      const receipt = await (await tx.execute(client)).getReceipt(client);
      expect(receipt.topicSequenceNumber?.toNumber()).toBe(5);
      const fresh = await (await new TopicCreateTransaction().execute(client)).getReceipt(client);
      expect(fresh.topicId!.num.toNumber()).toBeGreaterThan(topicId.num.toNumber());
    } finally {
      client.close();
      await node.stop();
    }
  });

  it('cuts a torn last line off, so appending after a crash leaves a journal the next restart can read', async () => {
    const torn = mkdtempSync(join(tmpdir(), 'hcs25-localnode-torn-'));
    try {
      let topicId: TopicId;
      {
        const node = await startEphemeral({ stateDir: torn });
        const client = node.client();
        topicId = (await (await new TopicCreateTransaction().execute(client)).getReceipt(client)).topicId as TopicId;
        await (
          await new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage('before crash').execute(client)
        ).getReceipt(client);
        client.close();
        await node.stop();
      }
      // A crash in the middle of an append.
      appendFileSync(join(torn, 'ledger.jsonl'), '{"k":"rec","p":2,"vs":"17');
      for (const text of ['after crash', 'after second restart']) {
        const node = await startEphemeral({ stateDir: torn });
        const client = node.client();
        try {
          await (
            await new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage(text).execute(client)
          ).getReceipt(client);
        } finally {
          client.close();
          await node.stop();
        }
      }
      const node = await startEphemeral({ stateDir: torn });
      try {
        const page = await getJson(`${node.mirrorRestUrl}/api/v1/topics/${topicId}/messages?encoding=utf-8`);
        expect(page.body.messages.map((m: { message: string }) => m.message)).toEqual([
          'before crash',
          'after crash',
          'after second restart',
        ]);
        expect(readFileSync(join(torn, 'ledger.jsonl'), 'utf8')).not.toContain('"vs":"17{');
      } finally {
        await node.stop();
      }
    } finally {
      rmSync(torn, { recursive: true, force: true });
    }
  });

  it('refuses a transaction id seen before the restart as DUPLICATE_TRANSACTION while it is still valid', async () => {
    const dup = mkdtempSync(join(tmpdir(), 'hcs25-localnode-dup-'));
    try {
      let topicId: TopicId;
      let txId: TransactionId;
      {
        const node = await startEphemeral({ stateDir: dup });
        const client = node.client();
        topicId = (await (await new TopicCreateTransaction().execute(client)).getReceipt(client)).topicId as TopicId;
        txId = TransactionId.generate(node.operator.accountId);
        await (
          await new TopicMessageSubmitTransaction()
            .setTopicId(topicId)
            .setMessage('once')
            .setTransactionId(txId)
            .execute(client)
        ).getReceipt(client);
        client.close();
        await node.stop();
      }
      const node = await startEphemeral({ stateDir: dup });
      const client = node.client();
      try {
        const again = new TopicMessageSubmitTransaction()
          .setTopicId(topicId)
          .setMessage('once')
          .setTransactionId(txId)
          .execute(client);
        const err = await again.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(err).toBeInstanceOf(PrecheckStatusError);
        expect((err as PrecheckStatusError).status.toString()).toBe('DUPLICATE_TRANSACTION');
        const page = await getJson(`${node.mirrorRestUrl}/api/v1/topics/${topicId}/messages`);
        expect(page.body.messages).toHaveLength(1);
        // The receipt still names the sequence number and running hash after the restart.
        const receipt = await new TransactionReceiptQuery().setTransactionId(txId).execute(client);
        expect(receipt.topicSequenceNumber?.toNumber()).toBe(1);
        expect(Buffer.from(receipt.topicRunningHash ?? []).toString('base64')).toBe(page.body.messages[0].running_hash);
      } finally {
        client.close();
        await node.stop();
      }
    } finally {
      rmSync(dup, { recursive: true, force: true });
    }
  });
});
