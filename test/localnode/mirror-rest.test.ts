/** Mirror REST shapes and semantics (digest §3), fed through the real SDK, on ephemeral ports. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  PrivateKey,
  TopicCreateTransaction,
  TopicMessageSubmitTransaction,
  type Client,
  type TopicId,
  type TransactionResponse,
} from '@hashgraph/sdk';
import type { LocalNode } from '../../src/localnode/index.js';
import { getJson, startEphemeral } from './helpers.js';

const N = 130;
let node: LocalNode;
let client: Client;
let topicId: TopicId;
let base: string;
let firstResponse: TransactionResponse;
const submitKey = PrivateKey.generateED25519();

interface Msg {
  consensus_timestamp: string;
  sequence_number: number;
  message: string;
  links?: unknown;
}

const seqs = (body: { messages: Msg[] }): number[] => body.messages.map((m) => m.sequence_number);

async function pageAll(first: string): Promise<{ seqs: number[]; pages: number; links: string[] }> {
  const out: number[] = [];
  const links: string[] = [];
  let url: string | null = first;
  let pages = 0;
  while (url) {
    const { status, body } = await getJson(url);
    expect(status).toBe(200);
    out.push(...seqs(body));
    pages++;
    url = body.links.next ? `${node.mirrorRestUrl}${body.links.next}` : null;
    if (body.links.next) links.push(body.links.next);
  }
  return { seqs: out, pages, links };
}

beforeAll(async () => {
  node = await startEphemeral();
  client = node.client();
  const created = await (
    await new TopicCreateTransaction().setTopicMemo('rest topic').setSubmitKey(submitKey.publicKey).execute(client)
  ).getReceipt(client);
  topicId = created.topicId as TopicId;
  base = `${node.mirrorRestUrl}/api/v1/topics/${topicId}/messages`;
  // Sequential so that sequence number i carries payload i.
  for (let i = 1; i <= N; i++) {
    const tx = await new TopicMessageSubmitTransaction()
      .setTopicId(topicId)
      .setMessage(`{"n":${i}}`)
      .freezeWith(client)
      .sign(submitKey);
    const r = await tx.execute(client);
    if (i === 1) firstResponse = r;
  }
  await firstResponse.getReceipt(client);
});

afterAll(async () => {
  client?.close();
  await node?.stop();
});

describe('GET /api/v1/topics/{id}/messages', () => {
  it('returns 25 messages in ascending order by default with the real fields', async () => {
    const { status, body } = await getJson(base);
    expect(status).toBe(200);
    expect(seqs(body)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    const m = body.messages[0];
    expect(Object.keys(m).sort()).toEqual([
      'chunk_info',
      'consensus_timestamp',
      'message',
      'payer_account_id',
      'running_hash',
      'running_hash_version',
      'sequence_number',
      'topic_id',
    ]);
    expect(m.topic_id).toBe(topicId.toString());
    expect(m.payer_account_id).toBe('0.0.2');
    expect(m.running_hash_version).toBe(3);
    expect(Buffer.from(m.running_hash, 'base64')).toHaveLength(48);
    expect(Buffer.from(m.message, 'base64').toString()).toBe('{"n":1}');
    expect(m.consensus_timestamp).toMatch(/^\d{10}\.\d{9}$/);
    expect(m.chunk_info).toMatchObject({
      number: 1,
      total: 1,
      initial_transaction_id: { account_id: '0.0.2', nonce: 0, scheduled: false },
    });
    expect(body.links.next).toBe(
      `/api/v1/topics/${topicId}/messages?timestamp=gt:${body.messages[24].consensus_timestamp}`,
    );
  });

  it('caps limit at 100', async () => {
    const { body } = await getJson(`${base}?limit=500`);
    expect(body.messages).toHaveLength(100);
    expect(body.links.next).toContain('limit=500');
  });

  it('sets links.next whenever the page is full, even when nothing follows', async () => {
    const { body } = await getJson(`${base}?sequencenumber=lte:10&limit=10`);
    expect(seqs(body)).toHaveLength(10);
    expect(body.links.next).not.toBeNull();
    const next = await getJson(`${node.mirrorRestUrl}${body.links.next}`);
    expect(next.body).toEqual({ messages: [], links: { next: null } });
  });

  it('pages through everything by timestamp, ascending and descending', async () => {
    const asc = await pageAll(`${base}?limit=50`);
    expect(asc.seqs).toEqual(Array.from({ length: N }, (_, i) => i + 1));
    expect(
      asc.links.every((l) => /^\/api\/v1\/topics\/0\.0\.\d+\/messages\?limit=50&timestamp=gt:\d+\.\d{9}$/.test(l)),
    ).toBe(true);
    const desc = await pageAll(`${base}?limit=40&order=desc`);
    expect(desc.seqs).toEqual(Array.from({ length: N }, (_, i) => N - i));
    expect(desc.links[0]).toMatch(/order=desc&timestamp=lt:/);
  });

  it('filters by sequence number', async () => {
    expect(seqs((await getJson(`${base}?sequencenumber=gt:125`)).body)).toEqual([126, 127, 128, 129, 130]);
    expect(seqs((await getJson(`${base}?sequencenumber=gte:5&sequencenumber=lt:8`)).body)).toEqual([5, 6, 7]);
    expect(seqs((await getJson(`${base}?sequencenumber=7`)).body)).toEqual([7]);
    expect(seqs((await getJson(`${base}?sequencenumber=eq:7`)).body)).toEqual([7]);
    expect(seqs((await getJson(`${base}?sequencenumber=lte:3&order=desc`)).body)).toEqual([3, 2, 1]);
  });

  it('filters by timestamp and keeps the other bound in links.next', async () => {
    const all = (await getJson(`${base}?limit=100`)).body.messages as Msg[];
    const t10 = all[9]!.consensus_timestamp;
    const t20 = all[19]!.consensus_timestamp;
    expect(seqs((await getJson(`${base}?timestamp=${t10}`)).body)).toEqual([10]);
    expect(seqs((await getJson(`${base}?timestamp=eq:${t10}`)).body)).toEqual([10]);
    const range = await getJson(`${base}?timestamp=gte:${t10}&timestamp=lt:${t20}&limit=4`);
    expect(seqs(range.body)).toEqual([10, 11, 12, 13]);
    expect(range.body.links.next).toBe(
      `/api/v1/topics/${topicId}/messages?timestamp=lt:${t20}&timestamp=gt:${range.body.messages[3].consensus_timestamp}&limit=4`,
    );
    const rest = await pageAll(`${base}?timestamp=gte:${t10}&timestamp=lt:${t20}&limit=4`);
    expect(rest.seqs).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
  });

  it('returns utf-8 text with encoding=utf-8', async () => {
    const { body } = await getJson(`${base}?limit=1&encoding=utf-8`);
    expect(body.messages[0].message).toBe('{"n":1}');
  });

  it.each([
    ['limit=0', 'Invalid parameter: limit'],
    ['limit=abc', 'Invalid parameter: limit'],
    ['order=up', 'Invalid parameter: order'],
    ['sequencenumber=ne:3', 'Invalid parameter: sequencenumber'],
    ['sequencenumber=gt:x', 'Invalid parameter: sequencenumber'],
    ['timestamp=ne:1', 'Invalid parameter: timestamp'],
    ['timestamp=yesterday', 'Invalid parameter: timestamp'],
    ['encoding=hex', 'Invalid parameter: encoding'],
    ['foo=1', 'Unknown query parameter: foo'],
  ])('answers 400 for %s', async (query, message) => {
    const { status, body } = await getJson(`${base}?${query}`);
    expect(status).toBe(400);
    expect(body).toEqual({ _status: { messages: [{ message }] } });
  });

  it('gives an empty page for an unknown topic and 400 for a malformed id', async () => {
    expect((await getJson(`${node.mirrorRestUrl}/api/v1/topics/0.0.999999/messages`)).body).toEqual({
      messages: [],
      links: { next: null },
    });
    expect((await getJson(`${node.mirrorRestUrl}/api/v1/topics/not-a-topic/messages`)).status).toBe(400);
  });
});

describe('single messages, topics, accounts, transactions', () => {
  it('GET /topics/{id}/messages/{seq} and /topics/messages/{timestamp}', async () => {
    const one = await getJson(`${base}/42`);
    expect(one.status).toBe(200);
    expect(one.body.sequence_number).toBe(42);
    const byTs = await getJson(`${node.mirrorRestUrl}/api/v1/topics/messages/${one.body.consensus_timestamp}`);
    expect(byTs.body).toEqual(one.body);
    const missing = await getJson(`${base}/9999`);
    expect(missing).toEqual({ status: 404, body: { _status: { messages: [{ message: 'Not found' }] } } });
  });

  it('GET /topics/{id}', async () => {
    const { status, body } = await getJson(`${node.mirrorRestUrl}/api/v1/topics/${topicId}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      topic_id: topicId.toString(),
      memo: 'rest topic',
      deleted: false,
      admin_key: null,
      auto_renew_account: '0.0.2',
      auto_renew_period: 7776000,
      submit_key: { _type: 'ED25519', key: Buffer.from(submitKey.publicKey.toBytesRaw()).toString('hex') },
      custom_fees: { fixed_fees: [] },
      fee_exempt_key_list: [],
      fee_schedule_key: null,
    });
    expect(body.timestamp.from).toBe(body.created_timestamp);
    expect((await getJson(`${node.mirrorRestUrl}/api/v1/topics/0.0.999999`)).status).toBe(404);
  });

  it('GET /accounts/{id} by id and by EVM address', async () => {
    const { body } = await getJson(`${node.mirrorRestUrl}/api/v1/accounts/0.0.2`);
    const operatorPublic = PrivateKey.fromStringDer(node.operator.privateKey).publicKey;
    expect(body).toMatchObject({
      account: '0.0.2',
      memo: '',
      deleted: false,
      key: { _type: 'ED25519', key: Buffer.from(operatorPublic.toBytesRaw()).toString('hex') },
    });
    expect(typeof body.balance.balance).toBe('number');
    const alias = node.accounts.find((a) => a.evmAddress);
    const byEvm = await getJson(`${node.mirrorRestUrl}/api/v1/accounts/${alias!.evmAddress}`);
    expect(byEvm.body).toMatchObject({
      account: alias!.accountId,
      evm_address: alias!.evmAddress,
      key: { _type: 'ECDSA_SECP256K1' },
    });
    expect((await getJson(`${node.mirrorRestUrl}/api/v1/accounts/0.0.777777`)).status).toBe(404);
    expect((await getJson(`${node.mirrorRestUrl}/api/v1/accounts/bogus!`)).status).toBe(400);
  });

  it('GET /transactions/{id} in mirror and SDK forms', async () => {
    const id = firstResponse.transactionId;
    const mirrorId = `${id.accountId}-${id.validStart!.seconds}-${String(id.validStart!.nanos).padStart(9, '0')}`;
    const { status, body } = await getJson(`${node.mirrorRestUrl}/api/v1/transactions/${mirrorId}`);
    expect(status).toBe(200);
    const tx = body.transactions[0];
    expect(tx).toMatchObject({
      name: 'CONSENSUSSUBMITMESSAGE',
      result: 'SUCCESS',
      entity_id: topicId.toString(),
      node: '0.0.3',
      transaction_id: mirrorId,
      valid_duration_seconds: '120',
      scheduled: false,
      nonce: 0,
    });
    expect(Buffer.from(tx.transaction_hash, 'base64')).toEqual(Buffer.from(firstResponse.transactionHash));
    expect(tx.transfers.reduce((s: number, t: { amount: number }) => s + t.amount, 0)).toBe(0);
    expect(tx.charged_tx_fee).toBeGreaterThan(0);
    expect((await getJson(`${node.mirrorRestUrl}/api/v1/transactions/${id.toString()}`)).body).toEqual(body);
    expect((await getJson(`${node.mirrorRestUrl}/api/v1/transactions/0.0.2-1-000000001`)).status).toBe(404);
  });

  it('answers 404 with the error shape for unknown routes', async () => {
    expect(await getJson(`${node.mirrorRestUrl}/api/v1/nothing-here`)).toEqual({
      status: 404,
      body: { _status: { messages: [{ message: 'Not found' }] } },
    });
  });
});
