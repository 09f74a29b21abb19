/**
 * HAPI rules the SDK never lets a caller break (chunk info, node account, size limits, unsupported methods,
 * receipt states, query payments), checked with hand-built protobufs over a raw gRPC client.
 */
import { createPrivateKey, sign } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { proto } from '@hashgraph/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalNode } from '../../src/localnode/index.js';
import { IMPLEMENTED, hapiMethods } from '../../src/localnode/services.js';
import { toLong as n } from '../../src/localnode/codec.js';
import { eventually, startEphemeral } from './helpers.js';

let node: LocalNode;
let rpc: grpc.Client;
let operatorKey: ReturnType<typeof createPrivateKey>;
let operatorPublic: Buffer;
let topicNum: number;
let clock = 0;

const S = proto.ResponseCodeEnum;
const id = (num: number): proto.IAccountID => ({ shardNum: n(0), realmNum: n(0), accountNum: n(num) });

function call(path: string, bytes: Uint8Array): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    rpc.makeUnaryRequest(
      path,
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.from(bytes),
      (err, res) => (err ? reject(err) : resolve(res as Buffer)),
    );
  });
}

/** A transaction id 10 s in the past, unique per call. */
function txId(payer = 2): proto.ITransactionID {
  const ms = Date.now() - 10_000;
  return {
    accountID: id(payer),
    transactionValidStart: { seconds: n(Math.floor(ms / 1000)), nanos: (ms % 1000) * 1_000_000 + ++clock },
  };
}

function signed(body: proto.ITransactionBody, signer = operatorKey, pub = operatorPublic): Uint8Array {
  const bodyBytes = proto.TransactionBody.encode(body).finish();
  const sig = sign(null, bodyBytes, signer);
  const st = proto.SignedTransaction.encode({
    bodyBytes,
    sigMap: { sigPair: [{ pubKeyPrefix: pub, ed25519: sig }] },
  }).finish();
  return proto.Transaction.encode({ signedTransactionBytes: st }).finish();
}

function body(data: proto.ITransactionBody, tid = txId()): proto.ITransactionBody {
  return {
    transactionID: tid,
    nodeAccountID: id(3),
    transactionFee: n(200_000_000),
    transactionValidDuration: { seconds: n(120) },
    ...data,
  };
}

async function submit(path: string, tx: Uint8Array): Promise<number> {
  return proto.TransactionResponse.decode(await call(path, tx)).nodeTransactionPrecheckCode;
}

async function receipt(tid: proto.ITransactionID): Promise<{ precheck: number; status?: number | null; seq?: number }> {
  const q = proto.Query.encode({ transactionGetReceipt: { header: {}, transactionID: tid } }).finish();
  const r = proto.Response.decode(await call('/proto.CryptoService/getTransactionReceipts', q)).transactionGetReceipt;
  return {
    precheck: r?.header?.nodeTransactionPrecheckCode ?? -1,
    status: r?.receipt?.status,
    seq: Number(r?.receipt?.topicSequenceNumber ?? 0),
  };
}

async function submitMessage(
  data: proto.IConsensusSubmitMessageTransactionBody,
  tid = txId(),
): Promise<{ precheck: number; status?: number | null }> {
  const precheck = await submit(
    '/proto.ConsensusService/submitMessage',
    signed(body({ consensusSubmitMessage: data }, tid)),
  );
  if (precheck !== S.OK) return { precheck };
  return receipt(tid);
}

beforeAll(async () => {
  node = await startEphemeral();
  rpc = new grpc.Client(`127.0.0.1:${node.ports.consensus}`, grpc.credentials.createInsecure());
  operatorKey = createPrivateKey({ key: Buffer.from(node.operator.privateKey, 'hex'), format: 'der', type: 'pkcs8' });
  operatorPublic = Buffer.from(operatorKey.export({ format: 'jwk' }).x as string, 'base64url');
  const tid = txId();
  expect(
    await submit(
      '/proto.ConsensusService/createTopic',
      signed(body({ consensusCreateTopic: { autoRenewPeriod: { seconds: n(7776000) } } }, tid)),
    ),
  ).toBe(S.OK);
  const q = proto.Query.encode({ transactionGetReceipt: { header: {}, transactionID: tid } }).finish();
  topicNum = Number(
    proto.Response.decode(await call('/proto.CryptoService/getTransactionReceipts', q)).transactionGetReceipt?.receipt
      ?.topicID?.topicNum,
  );
});

afterAll(async () => {
  rpc?.close();
  await node?.stop();
});

describe('chunk and message rules', () => {
  const topicID = (): proto.ITopicID => ({ shardNum: n(0), realmNum: n(0), topicNum: n(topicNum) });

  it('accepts a plain message without chunk info', async () => {
    expect(await submitMessage({ topicID: topicID(), message: Buffer.from('plain') })).toMatchObject({
      precheck: S.OK,
      status: S.SUCCESS,
    });
  });

  it('INVALID_CHUNK_NUMBER when number is 0 or above total', async () => {
    const tid = txId();
    expect(
      (
        await submitMessage(
          {
            topicID: topicID(),
            message: Buffer.from('x'),
            chunkInfo: { initialTransactionID: tid, number: 0, total: 2 },
          },
          tid,
        )
      ).status,
    ).toBe(S.INVALID_CHUNK_NUMBER);
    const tid2 = txId();
    expect(
      (
        await submitMessage(
          {
            topicID: topicID(),
            message: Buffer.from('x'),
            chunkInfo: { initialTransactionID: tid2, number: 3, total: 2 },
          },
          tid2,
        )
      ).status,
    ).toBe(S.INVALID_CHUNK_NUMBER);
  });

  it('INVALID_CHUNK_TRANSACTION_ID when chunk 1 is not its own initial id, or the payer differs', async () => {
    expect(
      (
        await submitMessage({
          topicID: topicID(),
          message: Buffer.from('x'),
          chunkInfo: { initialTransactionID: txId(), number: 1, total: 2 },
        })
      ).status,
    ).toBe(S.INVALID_CHUNK_TRANSACTION_ID);
    expect(
      (
        await submitMessage({
          topicID: topicID(),
          message: Buffer.from('x'),
          chunkInfo: { initialTransactionID: txId(1002), number: 2, total: 2 },
        })
      ).status,
    ).toBe(S.INVALID_CHUNK_TRANSACTION_ID);
  });

  it('refuses empty, oversized and topic-less messages at precheck, unknown topics at consensus', async () => {
    expect((await submitMessage({ topicID: topicID(), message: Buffer.alloc(0) })).precheck).toBe(
      S.INVALID_TOPIC_MESSAGE,
    );
    expect((await submitMessage({ topicID: topicID(), message: Buffer.alloc(1025, 1) })).precheck).toBe(
      S.MESSAGE_SIZE_TOO_LARGE,
    );
    expect((await submitMessage({ message: Buffer.from('x') })).precheck).toBe(S.INVALID_TOPIC_ID);
    expect((await submitMessage({ topicID: { topicNum: n(999_999) }, message: Buffer.from('x') })).status).toBe(
      S.INVALID_TOPIC_ID,
    );
  });
});

describe('ingest rules', () => {
  it('INVALID_NODE_ACCOUNT, INVALID_TRANSACTION_DURATION, TRANSACTION_OVERSIZE, INVALID_TRANSACTION', async () => {
    const msg = { consensusSubmitMessage: { topicID: { topicNum: n(topicNum) }, message: Buffer.from('x') } };
    expect(await submit('/proto.ConsensusService/submitMessage', signed({ ...body(msg), nodeAccountID: id(4) }))).toBe(
      S.INVALID_NODE_ACCOUNT,
    );
    expect(
      await submit(
        '/proto.ConsensusService/submitMessage',
        signed({ ...body(msg), transactionValidDuration: { seconds: n(181) } }),
      ),
    ).toBe(S.INVALID_TRANSACTION_DURATION);
    expect(
      await submit(
        '/proto.ConsensusService/submitMessage',
        signed(body({ ...msg, memo: 'x'.repeat(100) }), operatorKey, Buffer.alloc(6200)),
      ),
    ).toBe(S.TRANSACTION_OVERSIZE);
    expect(await submit('/proto.ConsensusService/submitMessage', Buffer.from([0xff, 0xff, 0xff]))).toBe(
      S.INVALID_TRANSACTION,
    );
  });

  it('PAYER_ACCOUNT_NOT_FOUND for an unknown payer', async () => {
    expect(
      await submit(
        '/proto.CryptoService/cryptoTransfer',
        signed(body({ cryptoTransfer: { transfers: { accountAmounts: [] } } }, txId(424242))),
      ),
    ).toBe(S.PAYER_ACCOUNT_NOT_FOUND);
  });

  it('answers NOT_SUPPORTED for every HAPI method it does not implement', async () => {
    const missing = hapiMethods().filter((m) => !IMPLEMENTED.has(m.path));
    expect(missing.length).toBeGreaterThan(50);
    for (const m of missing) {
      if (m.kind === 'transaction') {
        expect([m.path, await submit(m.path, signed(body({ utilPrng: {} })))]).toEqual([m.path, S.NOT_SUPPORTED]);
      } else {
        const q = proto.Query.encode({ fileGetContents: { header: {}, fileID: { fileNum: n(111) } } }).finish();
        const r = proto.Response.decode(await call(m.path, q));
        expect([m.path, r.fileGetContents?.header?.nodeTransactionPrecheckCode]).toEqual([m.path, S.NOT_SUPPORTED]);
      }
    }
  });
});

describe('receipts and paid queries', () => {
  it('RECEIPT_NOT_FOUND for an unknown transaction, UNKNOWN while consensus is pending', async () => {
    expect((await receipt(txId())).precheck).toBe(S.RECEIPT_NOT_FOUND);
    node.faults.setConsensusDelay(60_000);
    const tid = txId();
    try {
      expect(
        await submit(
          '/proto.ConsensusService/submitMessage',
          signed(
            body(
              { consensusSubmitMessage: { topicID: { topicNum: n(topicNum) }, message: Buffer.from('later') } },
              tid,
            ),
          ),
        ),
      ).toBe(S.OK);
      expect(await receipt(tid)).toMatchObject({ precheck: S.OK, status: S.UNKNOWN });
    } finally {
      node.faults.clear();
    }
    // Clearing the delay releases what was queued under it.
    expect(await eventually(async () => ((await receipt(tid)).status === S.SUCCESS ? true : undefined))).toBe(true);
  });

  it('answers COST_ANSWER with the cost and wants a verified payment of at least that much', async () => {
    const topicQuery = (payment?: Uint8Array, responseType = proto.ResponseType.ANSWER_ONLY): Uint8Array =>
      proto.Query.encode({
        consensusGetTopicInfo: {
          header: { responseType, ...(payment ? { payment: proto.Transaction.decode(payment) } : {}) },
          topicID: { topicNum: n(topicNum) },
        },
      }).finish();
    const ask = async (q: Uint8Array): Promise<proto.IConsensusGetTopicInfoResponse> =>
      proto.Response.decode(await call('/proto.ConsensusService/getTopicInfo', q)).consensusGetTopicInfo ?? {};
    const cost = await ask(topicQuery(undefined, proto.ResponseType.COST_ANSWER));
    expect(cost.header?.nodeTransactionPrecheckCode).toBe(S.OK);
    const price = Number(cost.header?.cost);
    expect(price).toBeGreaterThan(0);
    const pay = (amount: number, key = operatorKey): Uint8Array =>
      signed(
        body({
          cryptoTransfer: {
            transfers: {
              accountAmounts: [
                { accountID: id(2), amount: n(-amount) },
                { accountID: id(3), amount: n(amount) },
              ],
            },
          },
        }),
        key,
      );
    expect((await ask(topicQuery())).header?.nodeTransactionPrecheckCode).toBe(S.INSUFFICIENT_TX_FEE);
    expect((await ask(topicQuery(pay(price - 1)))).header?.nodeTransactionPrecheckCode).toBe(S.INSUFFICIENT_TX_FEE);
    const stranger = createPrivateKey({
      key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.alloc(32, 9)]),
      format: 'der',
      type: 'pkcs8',
    });
    expect((await ask(topicQuery(pay(price, stranger)))).header?.nodeTransactionPrecheckCode).toBe(S.INVALID_SIGNATURE);
    const answer = await ask(topicQuery(pay(price)));
    expect(answer.header?.nodeTransactionPrecheckCode).toBe(S.OK);
    expect(Number(answer.topicInfo?.sequenceNumber)).toBeGreaterThan(0);
  });
});
