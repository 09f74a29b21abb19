/**
 * The one file on the standard local-node ports (50211 / 5600 / 5551), driven by a plain `Client.forLocalNode()`.
 * If another local node holds those ports, startLocalNode fails at once with PORT_IN_USE (it does not hang).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AccountBalanceQuery,
  Client,
  Hbar,
  PrivateKey,
  Timestamp,
  TopicCreateTransaction,
  TopicInfoQuery,
  TopicMessageQuery,
  TopicMessageSubmitTransaction,
  type TopicId,
} from '@hashgraph/sdk';
import { startLocalNode, type LocalNode } from '../../src/localnode/index.js';
import { specRunningHash } from './helpers.js';

let node: LocalNode;
let client: Client;
const submitKey = PrivateKey.generateED25519();
const adminKey = PrivateKey.generateECDSA();
let topicId: TopicId;
let hashAfterFirst: Buffer;
let multiChunk: Buffer;

beforeAll(async () => {
  node = await startLocalNode({ quiet: true, accounts: 1 });
  client = Client.forLocalNode();
  client.setOperator(node.operator.accountId, PrivateKey.fromStringDer(node.operator.privateKey));
  // One UNAVAILABLE would otherwise quarantine the node for 8-16 s.
  client.setNodeMaxBackoff(500);
});

afterAll(async () => {
  client?.close();
  await node?.stop();
});

describe('Client.forLocalNode() against the emulator on the standard ports', () => {
  it('binds the standard ports', () => {
    expect(node.ports).toEqual({ consensus: 50211, mirrorGrpc: 5600, mirrorRest: 5551 });
    expect(node.mirrorRestUrl).toBe('http://127.0.0.1:5551');
  });

  it('pings the node and reads a balance', async () => {
    await client.ping('0.0.3');
    const balance = await new AccountBalanceQuery().setAccountId(node.operator.accountId).execute(client);
    expect(balance.hbars.toTinybars().toNumber()).toBeGreaterThan(0);
  });

  it('creates a topic with admin and submit keys', async () => {
    const tx = await new TopicCreateTransaction()
      .setTopicMemo('hcs-25:0:86400')
      .setSubmitKey(submitKey.publicKey)
      .setAdminKey(adminKey.publicKey)
      .freezeWith(client)
      .sign(adminKey);
    const receipt = await (await tx.execute(client)).getReceipt(client);
    expect(receipt.status.toString()).toBe('SUCCESS');
    expect(receipt.topicId).not.toBeNull();
    topicId = receipt.topicId as TopicId;
  });

  it('submits a single message: receipt sequence number and a running hash that matches the spec bytes', async () => {
    const before = await new TopicInfoQuery().setTopicId(topicId).execute(client);
    const tx = await new TopicMessageSubmitTransaction()
      .setTopicId(topicId)
      .setMessage('hello')
      .freezeWith(client)
      .sign(submitKey);
    const response = await tx.execute(client);
    const receipt = await response.getReceipt(client);
    const record = await response.getRecord(client);
    expect(receipt.topicSequenceNumber?.toNumber()).toBe(1);
    expect(Buffer.from(record.transactionHash)).toEqual(Buffer.from(response.transactionHash));
    const ts = record.consensusTimestamp;
    const expected = specRunningHash(
      before.runningHash,
      2,
      topicId.num.toNumber(),
      BigInt(ts.seconds.toString()),
      ts.nanos.toNumber(),
      1,
      Buffer.from('hello'),
    );
    expect(Buffer.from(receipt.topicRunningHash as Uint8Array).toString('hex')).toBe(expected.toString('hex'));
    hashAfterFirst = expected;
    expect(record.transactionFee.toTinybars().toNumber()).toBeGreaterThan(0);
  });

  it('submits a 3-chunk message; each chunk extends the running hash chain', async () => {
    const message = Buffer.alloc(3000);
    for (let i = 0; i < message.length; i++) message[i] = i % 251;
    const tx = await new TopicMessageSubmitTransaction()
      .setTopicId(topicId)
      .setMessage(message)
      .freezeWith(client)
      .sign(submitKey);
    const responses = await tx.executeAll(client);
    expect(responses).toHaveLength(3);
    let prev = hashAfterFirst;
    for (const [i, r] of responses.entries()) {
      const receipt = await r.getReceipt(client);
      const record = await r.getRecord(client);
      expect(receipt.topicSequenceNumber?.toNumber()).toBe(i + 2);
      const ts = record.consensusTimestamp;
      const chunk = message.subarray(i * 1024, (i + 1) * 1024);
      prev = specRunningHash(
        prev,
        2,
        topicId.num.toNumber(),
        BigInt(ts.seconds.toString()),
        ts.nanos.toNumber(),
        i + 2,
        chunk,
      );
      expect(Buffer.from(receipt.topicRunningHash as Uint8Array).toString('hex')).toBe(prev.toString('hex'));
    }
    const info = await new TopicInfoQuery().setTopicId(topicId).execute(client);
    expect(Buffer.from(info.runningHash).toString('hex')).toBe(prev.toString('hex'));
    multiChunk = message;
  });

  it('runs TopicInfoQuery (a paid query) with the topic state', async () => {
    const info = await new TopicInfoQuery().setTopicId(topicId).setQueryPayment(new Hbar(1)).execute(client);
    expect(info.topicMemo).toBe('hcs-25:0:86400');
    expect(info.sequenceNumber.toNumber()).toBe(4);
    expect(info.submitKey?.toString()).toBe(submitKey.publicKey.toString());
    expect(info.adminKey?.toString()).toBe(adminKey.publicKey.toString());
    expect(info.autoRenewAccountId?.toString()).toBe('0.0.2');
  });

  it('streams the history with TopicMessageQuery, chunks reassembled', async () => {
    let handle: { unsubscribe(): void } | undefined;
    const got = await new Promise<Buffer[]>((resolve, reject) => {
      const out: Buffer[] = [];
      handle = new TopicMessageQuery()
        .setTopicId(topicId)
        .setStartTime(Timestamp.fromDate(new Date(0)))
        .subscribe(
          client,
          (_m, err) => reject(err),
          (m) => {
            out.push(Buffer.from(m.contents));
            if (out.length === 2) resolve(out);
          },
        );
    });
    handle?.unsubscribe();
    expect(got[0]?.toString()).toBe('hello');
    expect(got[1]).toEqual(multiChunk);
  });

  it('recovers from an injected gRPC UNAVAILABLE (local-node retry mode)', async () => {
    node.faults.injectGrpcError('submitMessage', 14, 1);
    const tx = await new TopicMessageSubmitTransaction()
      .setTopicId(topicId)
      .setMessage('after outage')
      .freezeWith(client)
      .sign(submitKey);
    const receipt = await (await tx.execute(client)).getReceipt(client);
    expect(receipt.topicSequenceNumber?.toNumber()).toBe(5);
  });

  it('a second emulator on the same ports fails fast with PORT_IN_USE', async () => {
    await expect(startLocalNode({ quiet: true, accounts: 0 })).rejects.toMatchObject({ code: 'PORT_IN_USE' });
  });
});
