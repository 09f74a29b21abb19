/** Fault injection, consensus delay and mirror lag as the SDK experiences them (ephemeral ports). */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  PrivateKey,
  ReceiptStatusError,
  Timestamp,
  TopicCreateTransaction,
  TopicMessageQuery,
  TopicMessageSubmitTransaction,
  type Client,
  type TopicId,
} from '@hashgraph/sdk';
import type { LocalNode } from '../../src/localnode/index.js';
import { HANDLERS } from '../../src/localnode/ledger.js';
import { eventually, getJson, startEphemeral } from './helpers.js';

let node: LocalNode;
let client: Client;
let topicId: TopicId;

async function submit(text: string): Promise<number> {
  const receipt = await (
    await new TopicMessageSubmitTransaction().setTopicId(topicId).setMessage(text).execute(client)
  ).getReceipt(client);
  return receipt.topicSequenceNumber?.toNumber() ?? -1;
}

const calls = (method: string): number => node.stats().calls[method] ?? 0;

beforeAll(async () => {
  node = await startEphemeral();
  client = node.client();
  topicId = (await (await new TopicCreateTransaction().execute(client)).getReceipt(client)).topicId as TopicId;
});

beforeEach(() => node.faults.clear());

afterAll(async () => {
  client?.close();
  await node?.stop();
});

describe('faults', () => {
  it('injected BUSY is retried by the SDK and the submit succeeds', async () => {
    const before = calls('submitMessage');
    node.faults.injectPrecheck('submitMessage', 'BUSY', 2);
    expect(await submit('busy twice')).toBeGreaterThan(0);
    expect(calls('submitMessage') - before).toBe(3);
  });

  it('PLATFORM_TRANSACTION_NOT_CREATED is retried too', async () => {
    node.faults.injectPrecheck('ConsensusService/submitMessage', 'PLATFORM_TRANSACTION_NOT_CREATED', 1);
    expect(await submit('not created once')).toBeGreaterThan(0);
  });

  it('BUSY on receipt queries is retried', async () => {
    const before = calls('getTransactionReceipts');
    node.faults.injectPrecheck('getTransactionReceipts', 'BUSY', 2);
    expect(await submit('busy receipts')).toBeGreaterThan(0);
    expect(calls('getTransactionReceipts') - before).toBe(3);
  });

  it('rejects unknown status names and bad gRPC codes', () => {
    expect(() => node.faults.injectPrecheck('*', 'NOT_A_STATUS')).toThrow(/unknown precheck status/);
    expect(() => node.faults.injectGrpcError('*', 99)).toThrow(/1\.\.16/);
  });

  it('gRPC UNAVAILABLE on a custom port: the SDK gives up on its single node, then recovers after the node backoff', async () => {
    node.faults.injectGrpcError('submitMessage', 14, 1);
    await expect(submit('unavailable')).rejects.toThrow(/unhealthy/);
    expect(await eventually(() => submit('after outage').catch(() => undefined))).toBeGreaterThan(0);
  });

  it('gRPC UNAVAILABLE on receipt queries is retried even on a custom port', async () => {
    node.faults.injectGrpcError('getTransactionReceipts', 14, 1);
    expect(await submit('receipt unavailable')).toBeGreaterThan(0);
  });

  it('dropped connections: the client reconnects on its next request', async () => {
    expect(await submit('before drop')).toBeGreaterThan(0);
    node.faults.dropConnections();
    expect(await eventually(() => submit('after drop').catch(() => undefined))).toBeGreaterThan(0);
  });

  it('consensus delay: receipts are UNKNOWN (polled again) until consensus', async () => {
    node.faults.setConsensusDelay(600);
    const before = calls('getTransactionReceipts');
    expect(await submit('delayed')).toBeGreaterThan(0);
    expect(calls('getTransactionReceipts') - before).toBeGreaterThanOrEqual(2);
  });
});

describe('mirror lag', () => {
  it('REST and gRPC see a message only after the lag', async () => {
    // Long enough that submitting and the first reads finish inside it on a loaded machine.
    node.faults.setMirrorLag(2_000);
    const seq = await submit('lagging');
    const url = `${node.mirrorRestUrl}/api/v1/topics/${topicId}/messages/${seq}`;
    expect((await getJson(url)).status).toBe(404);
    const page = await getJson(`${node.mirrorRestUrl}/api/v1/topics/${topicId}/messages?sequencenumber=${seq}`);
    expect(page.body.messages).toEqual([]);
    const body = await eventually(async () => {
      const r = await getJson(url);
      return r.status === 200 ? r.body : undefined;
    });
    expect(Buffer.from(body.message, 'base64').toString()).toBe('lagging');
  });

  it('a live subscription receives the message after the lag', async () => {
    node.faults.setMirrorLag(300);
    const start = Timestamp.fromDate(new Date());
    let handle: { unsubscribe(): void } | undefined;
    const received = new Promise<string>((resolve, reject) => {
      handle = new TopicMessageQuery()
        .setTopicId(topicId)
        .setStartTime(start)
        .subscribe(
          client,
          (_m, err) => reject(err),
          (m) => resolve(Buffer.from(m.contents).toString()),
        );
    });
    await submit('live');
    expect(await received).toBe('live');
    handle?.unsubscribe();
  });

  it('a topic created within the lag is unknown to the mirror', async () => {
    node.faults.setMirrorLag(60_000);
    const fresh = (
      await (
        await new TopicCreateTransaction().setSubmitKey(PrivateKey.generateED25519().publicKey).execute(client)
      ).getReceipt(client)
    ).topicId;
    expect((await getJson(`${node.mirrorRestUrl}/api/v1/topics/${fresh}`)).status).toBe(404);
  });

  it('a handler that throws during delayed consensus gives FAIL_INVALID instead of crashing the consensus timer', async () => {
    const original = HANDLERS.consensusSubmitMessage!;
    HANDLERS.consensusSubmitMessage = {
      ...original,
      handle: () => {
        throw new Error('handler bug');
      },
    };
    node.faults.setConsensusDelay(20);
    try {
      const err = await submit('boom').then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ReceiptStatusError);
      expect((err as ReceiptStatusError).status.toString()).toBe('FAIL_INVALID');
    } finally {
      HANDLERS.consensusSubmitMessage = original;
    }
    expect(await submit('after the bug')).toBeGreaterThan(0);
  });
});
