/**
 * Crypto accounts (create with memo, update memo and key, transfers, info) and the standards-sdk's
 * HederaMirrorNode reading topic messages and account memos from the emulator's REST (ephemeral ports).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccountBalanceQuery,
  AddressBookQuery,
  FileId,
  AccountCreateTransaction,
  AccountInfoQuery,
  AccountUpdateTransaction,
  Hbar,
  PrivateKey,
  ReceiptStatusError,
  TopicCreateTransaction,
  TopicMessageSubmitTransaction,
  TransferTransaction,
  type AccountId,
  type Client,
  type TopicId,
} from '@hashgraph/sdk';
import type { LocalNode } from '../../src/localnode/index.js';
import { getJson, startEphemeral } from './helpers.js';

interface StandardsSdk {
  Logger: new (o: { level: string }) => unknown;
  HederaMirrorNode: new (
    network: 'mainnet' | 'testnet',
    logger: unknown,
    config: { customUrl: string },
  ) => {
    getTopicMessages(topicId: string): Promise<Array<Record<string, unknown>>>;
    getAccountMemo(accountId: string): Promise<string | null>;
    getTopicInfo(topicId: string): Promise<{ topic_id: string }>;
  };
}

let node: LocalNode;
let client: Client;
const key = PrivateKey.generateED25519();
let accountId: AccountId;

beforeAll(async () => {
  node = await startEphemeral();
  client = node.client();
  const receipt = await (
    await (
      await new AccountCreateTransaction()
        .setKeyWithoutAlias(key.publicKey)
        .setInitialBalance(new Hbar(25))
        .setAccountMemo('hcs-11:hcs://1/0.0.1234')
        .freezeWith(client)
        .sign(key)
    ).execute(client)
  ).getReceipt(client);
  accountId = receipt.accountId as AccountId;
});

afterAll(async () => {
  client?.close();
  await node?.stop();
});

describe('crypto accounts', () => {
  it('creates an account with a memo and an initial balance', async () => {
    const info = await new AccountInfoQuery().setAccountId(accountId).execute(client);
    expect(info.accountMemo).toBe('hcs-11:hcs://1/0.0.1234');
    expect(info.balance.toTinybars().toNumber()).toBe(25 * 1e8);
    expect(info.key.toString()).toBe(key.publicKey.toString());
    const rest = await getJson(`${node.mirrorRestUrl}/api/v1/accounts/${accountId}`);
    expect(rest.body).toMatchObject({
      account: accountId.toString(),
      memo: 'hcs-11:hcs://1/0.0.1234',
      balance: { balance: 25 * 1e8 },
    });
  });

  it('updates the memo only with the account key', async () => {
    const unsigned = await new AccountUpdateTransaction()
      .setAccountId(accountId)
      .setAccountMemo('hcs-11:stolen')
      .execute(client);
    await expect(unsigned.getReceipt(client)).rejects.toBeInstanceOf(ReceiptStatusError);
    const signed = await new AccountUpdateTransaction()
      .setAccountId(accountId)
      .setAccountMemo('hcs-11:hcs://1/0.0.5678')
      .freezeWith(client)
      .sign(key);
    expect((await (await signed.execute(client)).getReceipt(client)).status.toString()).toBe('SUCCESS');
    const rest = await getJson(`${node.mirrorRestUrl}/api/v1/accounts/${accountId}`);
    expect(rest.body.memo).toBe('hcs-11:hcs://1/0.0.5678');
  });

  it('rotates the key when both old and new keys sign', async () => {
    const next = PrivateKey.generateECDSA();
    const halfSigned = await new AccountUpdateTransaction()
      .setAccountId(accountId)
      .setKey(next.publicKey)
      .freezeWith(client)
      .sign(key);
    await expect((await halfSigned.execute(client)).getReceipt(client)).rejects.toThrow(/INVALID_SIGNATURE/);
    const tx = await (
      await new AccountUpdateTransaction().setAccountId(accountId).setKey(next.publicKey).freezeWith(client).sign(key)
    ).sign(next);
    expect((await (await tx.execute(client)).getReceipt(client)).status.toString()).toBe('SUCCESS');
    const rest = await getJson(`${node.mirrorRestUrl}/api/v1/accounts/${accountId}`);
    expect(rest.body.key).toEqual({
      _type: 'ECDSA_SECP256K1',
      key: Buffer.from(next.publicKey.toBytesRaw()).toString('hex'),
    });
  });

  it('creates an ECDSA account with its EVM address as alias, found by that address on the mirror', async () => {
    const ecdsa = PrivateKey.generateECDSA();
    const tx = await new AccountCreateTransaction()
      .setECDSAKeyWithAlias(ecdsa.publicKey)
      .setInitialBalance(new Hbar(1))
      .freezeWith(client)
      .sign(ecdsa);
    const created = (await (await tx.execute(client)).getReceipt(client)).accountId as AccountId;
    const evm = `0x${ecdsa.publicKey.toEvmAddress()}`;
    const rest = await getJson(`${node.mirrorRestUrl}/api/v1/accounts/${evm}`);
    expect(rest.body).toMatchObject({ account: created.toString(), evm_address: evm });
    const unsigned = await new AccountCreateTransaction()
      .setECDSAKeyWithAlias(PrivateKey.generateECDSA().publicKey)
      .execute(client);
    await expect(unsigned.getReceipt(client)).rejects.toThrow(/INVALID_SIGNATURE/);
  });

  it('answers the mirror address book (NetworkService/getNodes) with this node', async () => {
    const book = await new AddressBookQuery().setFileId(FileId.ADDRESS_BOOK).execute(client);
    expect(book.nodeAddresses).toHaveLength(1);
    expect(book.nodeAddresses[0]?.accountId?.toString()).toBe('0.0.3');
    expect(book.nodeAddresses[0]?.addresses[0]?.port).toBe(node.ports.consensus);
  });

  it('transfers hbar; the sender must sign', async () => {
    const from = node.accounts.find((a) => a.type === 'ED25519')!;
    const before = await new AccountBalanceQuery().setAccountId(accountId).execute(client);
    const unsigned = await new TransferTransaction()
      .addHbarTransfer(from.accountId, new Hbar(-5))
      .addHbarTransfer(accountId, new Hbar(5))
      .execute(client);
    await expect(unsigned.getReceipt(client)).rejects.toThrow(/INVALID_SIGNATURE/);
    const tx = await new TransferTransaction()
      .addHbarTransfer(from.accountId, new Hbar(-5))
      .addHbarTransfer(accountId, new Hbar(5))
      .freezeWith(client)
      .sign(PrivateKey.fromStringDer(from.privateKey));
    const response = await tx.execute(client);
    await response.getReceipt(client);
    const after = await new AccountBalanceQuery().setAccountId(accountId).execute(client);
    expect(after.hbars.toTinybars().toNumber() - before.hbars.toTinybars().toNumber()).toBe(5 * 1e8);
    const record = await response.getRecord(client);
    const net = record.transfers.reduce((s, t) => s + t.amount.toTinybars().toNumber(), 0);
    expect(net).toBe(0);
  });
});

describe('standards-sdk HederaMirrorNode with customUrl', () => {
  it('reads topic messages and account memos', async () => {
    const topicId = (await (await new TopicCreateTransaction().execute(client)).getReceipt(client)).topicId as TopicId;
    for (const n of [1, 2, 3]) {
      await (
        await new TopicMessageSubmitTransaction()
          .setTopicId(topicId)
          .setMessage(JSON.stringify({ p: 'hcs-25', n }))
          .execute(client)
      ).getReceipt(client);
    }
    // The package's .d.ts uses extensionless re-exports that NodeNext cannot follow: describe what we call.
    const sdk = (await import('@hashgraphonline/standards-sdk')) as unknown as StandardsSdk;
    const mirror = new sdk.HederaMirrorNode('testnet', new sdk.Logger({ level: 'silent' }), {
      customUrl: node.mirrorRestUrl,
    });
    const messages = await mirror.getTopicMessages(topicId.toString());
    expect(messages.map((m) => m.n)).toEqual([1, 2, 3]);
    expect(messages[0]).toMatchObject({
      p: 'hcs-25',
      sequence_number: 1,
      payer: '0.0.2',
      topic_id: topicId.toString(),
    });
    expect(await mirror.getAccountMemo(accountId.toString())).toBe('hcs-11:hcs://1/0.0.5678');
    const info = await mirror.getTopicInfo(topicId.toString());
    expect(info.topic_id).toBe(topicId.toString());
  });
});
