import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChunkAssembler } from '../../src/hedera/chunks.js';
import {
  MirrorError,
  MirrorRestClient,
  type DroppedChunk,
  type RawTopicMessage,
  type TopicMessage,
} from '../../src/hedera/mirror-rest.js';
import { FakeMirror } from './fake-mirror.js';

let mirror: FakeMirror;
let client: MirrorRestClient;

beforeAll(async () => {
  mirror = await new FakeMirror().start();
  client = new MirrorRestClient({
    baseUrl: `${mirror.url}/api/v1/`,
    minBackoffMs: 5,
    maxBackoffMs: 20,
    timeoutMs: 2_000,
  });
});
afterAll(async () => {
  await client.close();
  await mirror.stop();
});
afterEach(() => {
  mirror.faults.length = 0;
  mirror.requests.length = 0;
});

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

describe('MirrorRestClient', () => {
  it('pages through links.next at 100 per page and yields every message in order', async () => {
    const topic = mirror.createTopic('t');
    for (let i = 1; i <= 250; i++) mirror.submit(topic, `m${i}`);
    const msgs = await collect(client.topicMessages(topic));
    expect(msgs.map((m) => m.message.toString())).toEqual(Array.from({ length: 250 }, (_, i) => `m${i + 1}`));
    expect(msgs[0]).toMatchObject({ sequenceNumber: 1, firstSequenceNumber: 1, payerAccountId: '0.0.2', chunks: 1 });
    expect(msgs[0]!.runningHash).toMatch(/^[A-Za-z0-9+/=]{64}$/);
    const pages = mirror.requests.filter((r) => r.includes('/messages'));
    expect(pages).toHaveLength(3);
    expect(pages[0]).toContain('limit=100');
    expect(pages[1]).toContain('timestamp=gt%3A');
  });

  it('resumes after a sequence number, reads in descending order and stops at the limit', async () => {
    const topic = mirror.createTopic('t');
    for (let i = 1; i <= 30; i++) mirror.submit(topic, `m${i}`);
    const after = await collect(client.topicMessages(topic, { afterSequence: 25 }));
    expect(after.map((m) => m.sequenceNumber)).toEqual([26, 27, 28, 29, 30]);
    expect(mirror.requests.at(-1)).toContain('sequencenumber=gt%3A25');
    const desc = await collect(client.topicMessages(topic, { order: 'desc', limit: 3 }));
    expect(desc.map((m) => m.sequenceNumber)).toEqual([30, 29, 28]);
  });

  it('reassembles chunked messages, including chunks interleaved with other messages', async () => {
    const topic = mirror.createTopic('t');
    mirror.submit(topic, 'before');
    const big = 'x'.repeat(2500);
    const t = mirror.topic(topic);
    // Interleave by hand: chunk 1, an ordinary message, chunks 2 and 3.
    const seqs = mirror.submit(topic, big);
    const [c1, c2, c3] = t.messages.splice(1, 3);
    t.messages.push(c1!);
    mirror.submit(topic, 'between');
    const between = t.messages.pop()!;
    t.messages.push(between, c2!, c3!);
    for (const [i, m] of t.messages.entries()) m.sequence_number = i + 1;
    expect(seqs).toHaveLength(3);
    const msgs = await collect(client.topicMessages(topic));
    expect(msgs.map((m) => [m.message.length, m.chunks])).toEqual([
      [6, 1],
      [7, 1],
      [2500, 3],
    ]);
    expect(msgs[2]).toMatchObject({ sequenceNumber: 5, firstSequenceNumber: 2 });
    // Descending, a chunked message is whole once its first chunk is read (after "between").
    const desc = await collect(client.topicMessages(topic, { order: 'desc' }));
    expect(desc.map((m) => m.message.length)).toEqual([7, 2500, 6]);
  });

  it('retries 429 and 5xx with backoff, honouring Retry-After up to the ceiling', async () => {
    const topic = mirror.createTopic('hcs-2:0:60');
    mirror.faults.push({ status: 429, retryAfter: '0' }, { status: 503 }, { status: 502 });
    const info = await client.getTopic(topic);
    expect(info?.memo).toBe('hcs-2:0:60');
    expect(mirror.requests).toHaveLength(4);
  });

  it('gives up after the retry budget with a typed error', async () => {
    const few = new MirrorRestClient({ baseUrl: mirror.url, retries: 2, minBackoffMs: 1, maxBackoffMs: 2 });
    mirror.faults.push({ status: 500 }, { status: 500 }, { status: 500 });
    await expect(few.getTopic('0.0.1')).rejects.toMatchObject({ code: 'MIRROR_UNAVAILABLE', status: 500 });
    await few.close();
  });

  it('times out a request that never answers, then retries it', async () => {
    const quick = new MirrorRestClient({ baseUrl: mirror.url, timeoutMs: 150, retries: 1, minBackoffMs: 1 });
    const topic = mirror.createTopic('memo');
    mirror.faults.push({ status: 'hang' });
    expect((await quick.getTopic(topic))?.memo).toBe('memo');
    mirror.faults.push({ status: 'hang' }, { status: 'hang' });
    await expect(quick.getTopic(topic)).rejects.toThrow(/did not answer within 150 ms/);
    await quick.close();
  });

  it('says each retry on its way, and a timeout names the variable that allows more time', async () => {
    const notes: string[] = [];
    const quick = new MirrorRestClient({
      baseUrl: mirror.url,
      timeoutMs: 150,
      retries: 1,
      minBackoffMs: 1,
      onRetry: (line) => notes.push(line),
    });
    mirror.faults.push({ status: 'hang' }, { status: 'hang' });
    const err = await quick.getTopic(mirror.createTopic('memo')).catch((e: unknown) => e);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/did not answer within 150 ms .*; retrying in \d+\.\d s \(try 2 of 2\)$/);
    expect(err).toMatchObject({
      code: 'MIRROR_UNAVAILABLE',
      hint: expect.stringMatching(/HCS25_MIRROR_TIMEOUT_MS \(now 150\)/),
    });
    await quick.close();
  });

  it('an https URL for a plain-HTTP mirror node: one line naming the http URL, no OpenSSL text, no retries', async () => {
    const notes: string[] = [];
    const tls = new MirrorRestClient({ baseUrl: mirror.url.replace('http:', 'https:'), onRetry: (l) => notes.push(l) });
    const err = (await tls.getTopic('0.0.1').catch((e: unknown) => e)) as MirrorError;
    expect(err.code).toBe('MIRROR_REQUEST');
    expect(err.message).toMatch(
      /^mirror node request failed for \/api\/v1\/topics\/0\.0\.1: TLS handshake failed \(\w+\)$/,
    );
    expect(err.hint).toBe(
      `the server at ${mirror.url.replace('http:', 'https:')} does not speak TLS; if it serves plain HTTP (a local node does), use ${mirror.url}`,
    );
    expect(notes).toEqual([]);
    await tls.close();
  });

  it('an http URL for a server that hangs up at once (as a TLS-only one does) suggests https', async () => {
    const server = createTcpServer((socket) => socket.once('data', () => socket.destroy()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const plain = new MirrorRestClient({ baseUrl: url, retries: 0 });
    const err = (await plain.getTopic('0.0.1').catch((e: unknown) => e)) as MirrorError;
    expect(err.message).toMatch(/connection closed by the server$/);
    expect(err.hint).toContain(`(if it serves HTTPS, use ${url.replace('http:', 'https:')})`);
    await plain.close();
    server.close();
  });

  it('treats unknown ids cleanly: null for entities, nothing for messages', async () => {
    expect(await client.getTopic('0.0.999999')).toBeNull();
    expect(await client.getAccount('0.0.999999')).toBeNull();
    expect(await client.getTopicMessage('0.0.999999', 1)).toBeNull();
    expect(await collect(client.topicMessages('0.0.999999'))).toEqual([]);
    await expect(client.getTopic('not-an-id')).rejects.toMatchObject({ code: 'MIRROR_REQUEST' });
  });

  it('reads accounts and single messages', async () => {
    mirror.accounts.set('0.0.77', { memo: 'hcs-11:hcs://1/0.0.78' });
    expect((await client.getAccount('0.0.77'))?.memo).toBe('hcs-11:hcs://1/0.0.78');
    const topic = mirror.createTopic('t');
    mirror.submit(topic, 'hello');
    const one = await client.getTopicMessage(topic, 1);
    expect(one?.message.toString()).toBe('hello');
    expect(one?.chunkInfo).toMatchObject({ number: 1, total: 1 });
  });

  it('rejects pages that do not match the mirror schema, and non-JSON bodies', async () => {
    const topic = mirror.createTopic('t');
    mirror.submit(topic, 'ok');
    (mirror.topic(topic).messages[0] as unknown as Record<string, unknown>).message = 42;
    await expect(collect(client.topicMessages(topic))).rejects.toBeInstanceOf(MirrorError);
    mirror.faults.push({ status: 'garbage' });
    await expect(client.getTopic(topic)).rejects.toMatchObject({ code: 'MIRROR_BAD_RESPONSE' });
  });

  it('pages 100,000 messages', async () => {
    const topic = mirror.createTopic('t');
    const t = mirror.topic(topic);
    for (let i = 1; i <= 100_000; i++) mirror.push(t, topic, Buffer.from(`{"i":${i}}`), '0.0.2', null);
    let count = 0;
    let inOrder = true;
    for await (const m of client.topicMessages(topic)) {
      if (m.sequenceNumber !== ++count) inOrder = false;
    }
    expect(count).toBe(100_000);
    expect(inOrder).toBe(true);
  });
});

describe('ChunkAssembler', () => {
  const raw = (seq: number, info: RawTopicMessage['chunkInfo'], ts = 1000 + seq): RawTopicMessage => ({
    sequenceNumber: seq,
    consensusTimestamp: `${ts}.000000000`,
    payerAccountId: '0.0.9',
    message: Buffer.from(`c${seq}`),
    runningHash: '',
    chunkInfo: info,
  });
  const chunk = (seq: number, number: number, total: number, tx = '0.0.9@1000.000000001', ts?: number) =>
    raw(seq, { initialTransactionId: tx, number, total }, ts);

  it('drops contradictory, duplicate and out-of-range chunks with reasons', () => {
    const dropped: DroppedChunk[] = [];
    const a = new ChunkAssembler((d) => dropped.push(d));
    const out: (TopicMessage | null)[] = [
      a.add(chunk(1, 0, 2)),
      a.add(chunk(2, 3, 2)),
      a.add(chunk(3, 1, 21)),
      a.add(chunk(4, 1, 2)),
      a.add(chunk(5, 1, 2)),
      a.add(chunk(6, 2, 3)),
      a.add(chunk(7, 2, 2)),
    ];
    expect(out.filter((m) => m !== null).map((m) => m!.message.toString())).toEqual(['c4c7']);
    expect(dropped.map((d) => d.sequenceNumber)).toEqual([1, 2, 3, 5, 6]);
    expect(dropped[3]!.reason).toContain('duplicate');
  });

  it('gives up on groups whose chunks can no longer arrive, and caps open groups', () => {
    const dropped: DroppedChunk[] = [];
    const a = new ChunkAssembler((d) => dropped.push(d));
    a.add(chunk(1, 1, 2, '0.0.9@1000.000000001', 1001));
    expect(a.add(raw(2, null, 1300))?.message.toString()).toBe('c2');
    expect(dropped).toEqual([{ sequenceNumber: 1, reason: expect.stringContaining('can no longer reach consensus') }]);
    dropped.length = 0;
    for (let i = 0; i < 1001; i++) a.add(chunk(10 + i, 1, 2, `0.0.9@1300.${String(i).padStart(9, '0')}`, 1300));
    expect(dropped).toHaveLength(1);
    expect(dropped[0]!.reason).toContain('more than 1000');
  });
});
