/** Precheck and signature rules through the real SDK, on ephemeral ports. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccountCreateTransaction,
  FileContentsQuery,
  Hbar,
  KeyList,
  PrecheckStatusError,
  PrivateKey,
  ReceiptStatusError,
  Timestamp,
  TokenCreateTransaction,
  TopicCreateTransaction,
  TopicMessageSubmitTransaction,
  TransactionId,
  type AccountId,
  type Client,
  type TopicId,
} from '@hashgraph/sdk';
import type { LocalNode } from '../../src/localnode/index.js';
import { startEphemeral } from './helpers.js';

let node: LocalNode;
let client: Client;
let topicId: TopicId;
const submitKey = PrivateKey.generateED25519();

/** The status a PrecheckStatusError or ReceiptStatusError carries, or `ok` when the call succeeds. */
async function statusOf(
  p: Promise<unknown>,
  kind: typeof PrecheckStatusError | typeof ReceiptStatusError,
): Promise<string> {
  try {
    await p;
    return kind === PrecheckStatusError ? 'OK' : 'SUCCESS';
  } catch (err) {
    if (err instanceof kind) return err.status.toString();
    throw err;
  }
}
const precheckStatus = (p: Promise<unknown>): Promise<string> => statusOf(p, PrecheckStatusError);
const receiptStatus = (p: Promise<unknown>): Promise<string> => statusOf(p, ReceiptStatusError);

beforeAll(async () => {
  node = await startEphemeral();
  client = node.client();
  const receipt = await (
    await new TopicCreateTransaction().setSubmitKey(submitKey.publicKey).execute(client)
  ).getReceipt(client);
  topicId = receipt.topicId as TopicId;
});

afterAll(async () => {
  client?.close();
  await node?.stop();
});

describe('precheck', () => {
  it('refuses a wrong payer signature with PrecheckStatusError INVALID_SIGNATURE', async () => {
    const impostor = node.client({
      accountId: node.operator.accountId,
      privateKey: PrivateKey.generateED25519().toStringDer(),
    });
    try {
      const status = await precheckStatus(new TopicCreateTransaction().execute(impostor));
      expect(status).toBe('INVALID_SIGNATURE');
    } finally {
      impostor.close();
    }
  });

  it('refuses a submit without the submit key at consensus: ReceiptStatusError INVALID_SIGNATURE', async () => {
    const response = await new TopicMessageSubmitTransaction()
      .setTopicId(topicId)
      .setMessage('unsigned')
      .execute(client);
    expect(await receiptStatus(response.getReceipt(client))).toBe('INVALID_SIGNATURE');
  });

  it('refuses a duplicate transaction id with DUPLICATE_TRANSACTION', async () => {
    const txId = TransactionId.generate(node.operator.accountId);
    const make = async (): Promise<TopicMessageSubmitTransaction> =>
      new TopicMessageSubmitTransaction()
        .setTopicId(topicId)
        .setMessage('once')
        .setTransactionId(txId)
        .freezeWith(client)
        .sign(submitKey);
    const first = await (await make()).execute(client);
    expect((await first.getReceipt(client)).topicSequenceNumber?.toNumber()).toBeGreaterThan(0);
    expect(await precheckStatus((await make()).execute(client))).toBe('DUPLICATE_TRANSACTION');
  });

  it('refuses an expired transaction with TRANSACTION_EXPIRED', async () => {
    const start = Timestamp.fromDate(new Date(Date.now() - 200_000));
    const tx = new TopicCreateTransaction().setTransactionId(
      TransactionId.withValidStart(client.operatorAccountId as AccountId, start),
    );
    expect(await precheckStatus(tx.execute(client))).toBe('TRANSACTION_EXPIRED');
  });

  it('refuses a valid start in the future with INVALID_TRANSACTION_START', async () => {
    const start = Timestamp.fromDate(new Date(Date.now() + 60_000));
    const tx = new TopicCreateTransaction().setTransactionId(
      TransactionId.withValidStart(client.operatorAccountId as AccountId, start),
    );
    expect(await precheckStatus(tx.execute(client))).toBe('INVALID_TRANSACTION_START');
  });

  it('refuses a max fee below the fee with INSUFFICIENT_TX_FEE', async () => {
    const tx = new TopicCreateTransaction().setMaxTransactionFee(Hbar.fromTinybars(1000));
    expect(await precheckStatus(tx.execute(client))).toBe('INSUFFICIENT_TX_FEE');
  });

  it('refuses a transaction memo over 100 bytes with MEMO_TOO_LONG', async () => {
    const tx = new TopicCreateTransaction().setTransactionMemo('m'.repeat(101));
    expect(await precheckStatus(tx.execute(client))).toBe('MEMO_TOO_LONG');
  });

  it('answers NOT_SUPPORTED for transactions and queries it does not emulate', async () => {
    const token = new TokenCreateTransaction()
      .setTokenName('t')
      .setTokenSymbol('T')
      .setTreasuryAccountId(node.operator.accountId);
    expect(await precheckStatus(token.execute(client))).toBe('NOT_SUPPORTED');
    expect(await precheckStatus(new FileContentsQuery().setFileId('0.0.111').execute(client))).toBe('NOT_SUPPORTED');
  });
});

describe('payer keys', () => {
  it('accepts an ECDSA secp256k1 payer and refuses a wrong ECDSA signature', async () => {
    const ecdsa = node.accounts.find((a) => a.type === 'ECDSA');
    expect(ecdsa).toBeDefined();
    const payer = node.client({ accountId: ecdsa!.accountId, privateKey: ecdsa!.privateKey });
    const wrong = node.client({ accountId: ecdsa!.accountId, privateKey: PrivateKey.generateECDSA().toStringDer() });
    try {
      const tx = await new TopicMessageSubmitTransaction()
        .setTopicId(topicId)
        .setMessage('from ecdsa')
        .freezeWith(payer)
        .sign(submitKey);
      const receipt = await (await tx.execute(payer)).getReceipt(payer);
      expect(receipt.status.toString()).toBe('SUCCESS');
      expect(await precheckStatus(new TopicCreateTransaction().execute(wrong))).toBe('INVALID_SIGNATURE');
    } finally {
      payer.close();
      wrong.close();
    }
  });

  it('checks KeyList and ThresholdKey payers', async () => {
    const keys = [PrivateKey.generateED25519(), PrivateKey.generateECDSA(), PrivateKey.generateED25519()];
    const threshold = new KeyList(
      keys.map((k) => k.publicKey),
      2,
    );
    const all = new KeyList(keys.map((k) => k.publicKey));
    const create = async (key: KeyList): Promise<AccountId> => {
      const r = await (
        await new AccountCreateTransaction().setKeyWithoutAlias(key).setInitialBalance(new Hbar(10)).execute(client)
      ).getReceipt(client);
      return r.accountId as AccountId;
    };
    const thresholdAccount = await create(threshold);
    const allAccount = await create(all);
    const submitAs = async (payer: AccountId, signers: PrivateKey[]): Promise<string> => {
      let tx = new TopicMessageSubmitTransaction()
        .setTopicId(topicId)
        .setMessage('multi-sig payer')
        .setTransactionId(TransactionId.generate(payer))
        .freezeWith(client);
      for (const k of [submitKey, ...signers]) tx = await tx.sign(k);
      return precheckStatus(tx.execute(client).then((r) => r.getReceipt(client)));
    };
    expect(await submitAs(thresholdAccount, [keys[0]!, keys[1]!])).toBe('OK');
    expect(await submitAs(thresholdAccount, [keys[2]!])).toBe('INVALID_SIGNATURE');
    expect(await submitAs(allAccount, keys)).toBe('OK');
    expect(await submitAs(allAccount, [keys[0]!, keys[1]!])).toBe('INVALID_SIGNATURE');
  });
});
