import { describe, expect, it } from 'vitest';
import {
  analyticsMemo,
  closeConnectionOp,
  connectionCreatedOp,
  connectionRequestOp,
  connectionTopicMemo,
  fitsInline,
  formatOperatorId,
  hcs1TopicOf,
  inboundTopicMemo,
  messageOp,
  outboundConnectionClosedOp,
  outboundConnectionCreatedOp,
  outboundConnectionRequestOp,
  outboundTopicMemo,
  parseHcs10TopicMemo,
  parseIncoming,
  parseOperatorId,
  registerOp,
  registryTopicMemo,
  Hcs10MessageTooLargeError,
  type Hcs10Outgoing,
} from '../../src/hcs10/messages.js';
import { replyText } from '../../src/hcs10/requester.js';
import { parseHcs10RegistryMemo } from '../../src/discover/hcs10.js';

const ME = formatOperatorId('0.0.1001', '0.0.2');
const AGENT = formatOperatorId('0.0.2001', '0.0.2000');

/** What the standards-sdk's builder put on the wire: the message body and the transaction memo. */
function wire(tx: WireTx): { payload: unknown; memo: string } {
  return { payload: JSON.parse(Buffer.from(tx.getMessage()!).toString('utf8')), memo: tx.transactionMemo };
}
function ours(op: Hcs10Outgoing): { payload: unknown; memo: string } {
  return { payload: JSON.parse(op.body), memo: op.memo };
}

interface WireTx {
  getMessage(): Uint8Array | null;
  transactionMemo: string;
}
interface TopicTx {
  getTopicMemo(): string | null;
}
/** The SDK's bundled .d.ts re-exports cannot be followed under NodeNext; the builders used here, declared locally. */
interface Hcs10Builders {
  buildHcs10SubmitConnectionRequestTx(p: object): WireTx;
  buildHcs10ConfirmConnectionTx(p: object): WireTx;
  buildHcs10OutboundConnectionRequestRecordTx(p: object): WireTx;
  buildHcs10OutboundConnectionCreatedRecordTx(p: object): WireTx;
  buildHcs10SendMessageTx(p: object): WireTx;
  buildHcs10RegistryRegisterTx(p: object): WireTx;
  buildHcs10CreateInboundTopicTx(p: object): TopicTx;
  buildHcs10CreateOutboundTopicTx(p: object): TopicTx;
  buildHcs10CreateConnectionTopicTx(p: object): TopicTx;
  buildHcs10CreateRegistryTopicTx(p: object): TopicTx;
}

describe('HCS-10 builders match the standards-sdk (payload and transaction memo)', async () => {
  const sdk = (await import('@hashgraphonline/standards-sdk')) as unknown as Hcs10Builders;

  it('connection_request on an inbound topic: hcs-10:op:3:1', () => {
    const op = connectionRequestOp({ operatorId: ME, m: 'eval' });
    expect(op.memo).toBe('hcs-10:op:3:1');
    expect(ours(op)).toEqual(
      wire(sdk.buildHcs10SubmitConnectionRequestTx({ inboundTopicId: '0.0.2001', operatorId: ME, memo: 'eval' })),
    );
  });

  it('connection_created on an inbound topic: hcs-10:op:4:1', () => {
    const args = { connectionTopicId: '0.0.3000', connectedAccountId: '0.0.2', operatorId: AGENT, connectionId: 7 };
    const op = connectionCreatedOp({ ...args, m: 'ok' });
    expect(op.memo).toBe('hcs-10:op:4:1');
    expect(ours(op)).toEqual(
      wire(sdk.buildHcs10ConfirmConnectionTx({ inboundTopicId: '0.0.2001', ...args, memo: 'ok' })),
    );
  });

  it('outbound records: hcs-10:op:3:2 and hcs-10:op:4:2', () => {
    const req = outboundConnectionRequestOp({
      operatorId: AGENT,
      outboundTopicId: '0.0.1000',
      connectionRequestId: 7,
      m: 'r',
    });
    expect(req.memo).toBe('hcs-10:op:3:2');
    expect(ours(req)).toEqual(
      wire(
        sdk.buildHcs10OutboundConnectionRequestRecordTx({
          outboundTopicId: '0.0.1000',
          operatorId: AGENT,
          connectionRequestId: 7,
          memo: 'r',
        }),
      ),
    );
    const created = {
      connectionTopicId: '0.0.3000',
      outboundTopicId: '0.0.2002',
      requestorOutboundTopicId: '0.0.1000',
      confirmedRequestId: 8,
      connectionRequestId: 7,
      operatorId: AGENT,
    };
    const op = outboundConnectionCreatedOp({ ...created, m: 'c' });
    expect(op.memo).toBe('hcs-10:op:4:2');
    expect(ours(op)).toEqual(wire(sdk.buildHcs10OutboundConnectionCreatedRecordTx({ ...created, memo: 'c' })));
  });

  it('message on a connection topic: hcs-10:op:6:3', () => {
    const op = messageOp({ operatorId: ME, data: 'What is 2 + 2?', m: 'q' });
    expect(op.memo).toBe('hcs-10:op:6:3');
    expect(ours(op)).toEqual(
      wire(
        sdk.buildHcs10SendMessageTx({
          connectionTopicId: '0.0.3000',
          operatorId: ME,
          data: 'What is 2 + 2?',
          memo: 'q',
        }),
      ),
    );
  });

  it('register on a registry: hcs-10:op:0:0', () => {
    const op = registerOp({ accountId: '0.0.2000', inboundTopicId: '0.0.2001', m: 'hi' });
    expect(op.memo).toBe('hcs-10:op:0:0');
    expect(ours(op)).toEqual(
      wire(
        sdk.buildHcs10RegistryRegisterTx({
          registryTopicId: '0.0.9',
          accountId: '0.0.2000',
          inboundTopicId: '0.0.2001',
          memo: 'hi',
        }),
      ),
    );
  });

  it('topic memos', () => {
    const memo = (tx: TopicTx): string | null => tx.getTopicMemo();
    expect(inboundTopicMemo('0.0.2000')).toBe(
      memo(sdk.buildHcs10CreateInboundTopicTx({ accountId: '0.0.2000', ttl: 60 })),
    );
    expect(outboundTopicMemo()).toBe(memo(sdk.buildHcs10CreateOutboundTopicTx({ ttl: 60 })));
    expect(connectionTopicMemo('0.0.2001', 7)).toBe(
      memo(sdk.buildHcs10CreateConnectionTopicTx({ ttl: 60, inboundTopicId: '0.0.2001', connectionId: 7 })),
    );
    expect(registryTopicMemo()).toBe(memo(sdk.buildHcs10CreateRegistryTopicTx({ ttl: 60 })));
    expect(registryTopicMemo(60, '0.0.5')).toBe(
      memo(sdk.buildHcs10CreateRegistryTopicTx({ ttl: 60, metadataTopicId: '0.0.5' })),
    );
  });
});

describe('HCS-10 builders without an SDK counterpart', () => {
  it('close_connection (hcs-10:op:5:3) and connection_closed (hcs-10:op:5:2) follow the spec examples', () => {
    const close = closeConnectionOp({ operatorId: ME, reason: 'Conversation completed', m: 'Closing connection.' });
    expect(close.memo).toBe('hcs-10:op:5:3');
    expect(close.payload).toEqual({
      p: 'hcs-10',
      op: 'close_connection',
      operator_id: ME,
      reason: 'Conversation completed',
      m: 'Closing connection.',
    });
    const closed = outboundConnectionClosedOp({ connectionTopicId: '0.0.3000', operatorId: ME, reason: 'done' });
    expect(closed.memo).toBe('hcs-10:op:5:2');
    expect(closed.payload).toEqual({
      p: 'hcs-10',
      op: 'connection_closed',
      connection_topic_id: '0.0.3000',
      close_method: 'explicit',
      operator_id: ME,
      reason: 'done',
    });
  });

  it('the analytics topic enum is not the topic-memo enum', () => {
    expect(analyticsMemo('connection_request', 'outbound')).toBe('hcs-10:op:3:2');
    expect(analyticsMemo('delete', 'registry')).toBe('hcs-10:op:1:0');
  });

  it('refuses a message over one HCS chunk, and says when data must go to HCS-1', () => {
    expect(() => messageOp({ operatorId: ME, data: 'x'.repeat(1100) })).toThrow(Hcs10MessageTooLargeError);
    expect(fitsInline(ME, 'x'.repeat(900))).toBe(true);
    expect(fitsInline(ME, 'x'.repeat(960))).toBe(false);
    // Multi-byte text is measured in bytes, not characters.
    expect(fitsInline(ME, 'é'.repeat(480))).toBe(false);
  });
});

describe('parsing', () => {
  it('topic memos of each type, and junk', () => {
    expect(parseHcs10TopicMemo('hcs-10:0:60:0:0.0.2000')).toEqual({ type: 'inbound', ttl: 60, accountId: '0.0.2000' });
    expect(parseHcs10TopicMemo('hcs-10:0:60:1')).toEqual({ type: 'outbound', ttl: 60 });
    expect(parseHcs10TopicMemo('hcs-10:1:60:2:0.0.2001:7')).toEqual({
      type: 'connection',
      ttl: 60,
      inboundTopicId: '0.0.2001',
      connectionId: 7,
    });
    expect(parseHcs10TopicMemo('hcs-10:0:60:3')).toEqual({ type: 'registry', ttl: 60 });
    expect(parseHcs10TopicMemo('hcs-10:0:60:3:0.0.5')).toEqual({ type: 'registry', ttl: 60, metadataTopicId: '0.0.5' });
    for (const bad of [
      'hcs-10:0:60:0',
      'hcs-10:0:60:1:0.0.5',
      'hcs-10:1:60:2:0.0.5',
      'hcs-2:0:60',
      'hcs-10:inbound:0.0.1',
      '',
    ]) {
      expect(parseHcs10TopicMemo(bad), bad).toBeNull();
    }
    // The registry memo we write is the one discovery reads.
    expect(parseHcs10RegistryMemo(registryTopicMemo())).toEqual({ ttl: 60 });
  });

  it('operator ids', () => {
    expect(parseOperatorId('0.0.1001@0.0.2')).toEqual({ inboundTopicId: '0.0.1001', accountId: '0.0.2' });
    expect(parseOperatorId('0.0.1001')).toBeNull();
    expect(parseOperatorId('0.0.1001@0.0.2@0.0.3')).toBeNull();
  });

  it('incoming ops: valid ones parse, hostile ones give reasons', () => {
    const created = parseIncoming(
      Buffer.from(
        JSON.stringify({
          p: 'hcs-10',
          op: 'connection_created',
          connection_topic_id: '0.0.3',
          connection_id: '12',
          operator_id: AGENT,
        }),
      ),
    );
    expect(created).toMatchObject({ ok: true, op: { op: 'connection_created', connection_id: 12 } });
    expect(parseIncoming(Buffer.from(connectionRequestOp({ operatorId: ME }).body))).toMatchObject({
      ok: true,
      op: { op: 'connection_request' },
    });
    const cases: [string | Buffer, RegExp][] = [
      ['not json', /JSON/],
      ['[1]', /object/],
      [JSON.stringify({ p: 'hcs-2', op: 'register' }), /hcs-10/],
      [JSON.stringify({ p: 'hcs-10', op: 'transaction' }), /not handled/],
      // Names on Object.prototype are not ops (a lookup by op name must not reach `Object.safeParse`).
      [JSON.stringify({ p: 'hcs-10', op: 'constructor' }), /not handled/],
      [JSON.stringify({ p: 'hcs-10', op: 'toString' }), /not handled/],
      [JSON.stringify({ p: 'hcs-10', op: '__proto__' }), /not handled/],
      [JSON.stringify({ p: 'hcs-10', op: 'message', operator_id: 'me', data: 'x' }), /operator_id/],
      [JSON.stringify({ p: 'hcs-10', op: 'message', operator_id: ME, data: 5 }), /data/],
      [Buffer.from([0xff, 0xfe, 0x7b]), /UTF-8/],
      [Buffer.alloc(30_000, 0x20), /bytes/],
    ];
    for (const [input, reason] of cases) {
      const r = parseIncoming(typeof input === 'string' ? Buffer.from(input) : input);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(reason);
    }
  });

  it('hcs://1 references and reply text', () => {
    expect(hcs1TopicOf('hcs://1/0.0.12345')).toBe('0.0.12345');
    expect(hcs1TopicOf(' hcs://1/0.0.12345\n')).toBe('0.0.12345');
    expect(hcs1TopicOf('hcs://2/0.0.12345')).toBeNull();
    expect(hcs1TopicOf('see hcs://1/0.0.12345')).toBeNull();
    expect(replyText('95')).toBe('95');
    expect(replyText('{"content":"95","metadata":{"t":1}}')).toBe('95');
    expect(replyText('{"other":1}')).toBe('{"other":1}');
    expect(replyText('{not json')).toBe('{not json');
  });
});
