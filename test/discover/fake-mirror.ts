/**
 * A small in-process mirror REST server for unit tests: the shapes and paging rules of the hiero mirror node
 * (`links.next` by timestamp, limit capped at 100, chunks served one per message), plus fault injection.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeMessage {
  sequence_number: number;
  consensus_timestamp: string;
  message: string;
  payer_account_id: string;
  running_hash: string;
  running_hash_version: number;
  topic_id: string;
  chunk_info: {
    initial_transaction_id: { account_id: string; nonce: number; scheduled: boolean; transaction_valid_start: string };
    number: number;
    total: number;
  } | null;
}

interface FakeTopic {
  memo: string;
  admin_key: { _type: string; key: string } | null;
  submit_key: { _type: string; key: string } | null;
  messages: FakeMessage[];
}

const KEY = { _type: 'ED25519', key: 'ab'.repeat(32) };

export class FakeMirror {
  private server: Server | undefined;
  readonly topics = new Map<string, FakeTopic>();
  readonly accounts = new Map<string, { memo: string; deleted?: boolean }>();
  private nextTopic = 5000;
  private clockSec = 1_700_000_000;
  /** Paths requested, in order. */
  readonly requests: string[] = [];
  /** Queued faults: each answers one request with this status (or hangs when 'hang'). */
  readonly faults: Array<{ status: number | 'hang' | 'garbage'; retryAfter?: string }> = [];
  /** Requests whose path matches answer 503 (a mirror node failing for a while). */
  failing: RegExp | undefined;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  createTopic(memo: string, keys: { admin?: boolean; submit?: boolean } = {}): string {
    const id = `0.0.${this.nextTopic++}`;
    this.topics.set(id, {
      memo,
      admin_key: keys.admin ? KEY : null,
      submit_key: keys.submit === false ? null : KEY,
      messages: [],
    });
    return id;
  }

  /** Appends a message; with `chunkSize`, splits it into chunks like the SDK does. Returns the sequence numbers. */
  submit(
    topicId: string,
    body: string | Buffer | object,
    options: { payer?: string; chunkSize?: number } = {},
  ): number[] {
    const topic = this.topics.get(topicId);
    if (!topic) throw new Error(`no topic ${topicId}`);
    const bytes = Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
    const size = options.chunkSize ?? 1024;
    const total = Math.max(1, Math.ceil(bytes.length / size));
    const payer = options.payer ?? '0.0.2';
    const validStart = `${this.clockSec}.000000001`;
    const seqs: number[] = [];
    for (let n = 1; n <= total; n++) {
      seqs.push(
        this.push(topic, topicId, bytes.subarray((n - 1) * size, n * size), payer, {
          initial_transaction_id: {
            account_id: payer,
            nonce: 0,
            scheduled: false,
            transaction_valid_start: validStart,
          },
          number: n,
          total,
        }),
      );
    }
    return seqs;
  }

  /** Appends one raw message exactly as given (for hostile chunk info). */
  push(topic: FakeTopic, topicId: string, bytes: Buffer, payer: string, chunkInfo: FakeMessage['chunk_info']): number {
    const seq = topic.messages.length + 1;
    this.clockSec++;
    topic.messages.push({
      sequence_number: seq,
      consensus_timestamp: `${this.clockSec}.000000000`,
      message: bytes.toString('base64'),
      payer_account_id: payer,
      running_hash: Buffer.alloc(48, seq % 256).toString('base64'),
      running_hash_version: 3,
      topic_id: topicId,
      chunk_info: chunkInfo,
    });
    return seq;
  }

  topic(id: string): FakeTopic {
    const t = this.topics.get(id);
    if (!t) throw new Error(`no topic ${id}`);
    return t;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://x');
    this.requests.push(url.pathname + url.search);
    if (this.failing?.test(url.pathname)) return void res.writeHead(503).end();
    const fault = this.faults.shift();
    if (fault?.status === 'hang') return; // never answers; the client's timeout must fire
    if (fault?.status === 'garbage')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end('{not json');
    if (fault) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (fault.retryAfter) headers['retry-after'] = fault.retryAfter;
      return void res
        .writeHead(fault.status, headers)
        .end(JSON.stringify({ _status: { messages: [{ message: 'fault' }] } }));
    }
    const send = (status: number, body: unknown): void =>
      void res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    const notFound = (): void => send(404, { _status: { messages: [{ message: 'Not found' }] } });
    let m = /^\/api\/v1\/topics\/(\d+\.\d+\.\d+)$/.exec(url.pathname);
    if (m) {
      const t = this.topics.get(m[1]!);
      if (!t) {
        notFound();
        return;
      }
      send(200, {
        topic_id: m[1],
        memo: t.memo,
        admin_key: t.admin_key,
        submit_key: t.submit_key,
        deleted: false,
        fee_schedule_key: null,
        custom_fees: { fixed_fees: [] },
      });
      return;
    }
    m = /^\/api\/v1\/accounts\/(\d+\.\d+\.\d+)$/.exec(url.pathname);
    if (m) {
      const a = this.accounts.get(m[1]!);
      if (!a) {
        notFound();
        return;
      }
      send(200, { account: m[1], memo: a.memo, deleted: a.deleted ?? false, key: KEY, balance: { balance: 1 } });
      return;
    }
    m = /^\/api\/v1\/topics\/(\d+\.\d+\.\d+)\/messages\/(\d+)$/.exec(url.pathname);
    if (m) {
      const msg = this.topics.get(m[1]!)?.messages[Number(m[2]) - 1];
      if (msg) send(200, msg);
      else notFound();
      return;
    }
    m = /^\/api\/v1\/topics\/(\d+\.\d+\.\d+)\/messages$/.exec(url.pathname);
    if (m) {
      this.messages(m[1]!, url, send);
      return;
    }
    notFound();
  }

  private messages(topicId: string, url: URL, send: (status: number, body: unknown) => void): void {
    const t = this.topics.get(topicId);
    const all = t?.messages ?? [];
    const limit = Math.min(Number(url.searchParams.get('limit') ?? 25), 100);
    const order = url.searchParams.get('order') ?? 'asc';
    // Filters parsed once per request: pages of a 100,000-message topic must stay cheap to serve.
    let minSeq = 0;
    let maxSeq = Number.POSITIVE_INFINITY;
    let minTs = Number.NEGATIVE_INFINITY;
    let maxTs = Number.POSITIVE_INFINITY;
    for (const f of url.searchParams.getAll('sequencenumber')) {
      const [op, v] = f.split(':') as [string, string];
      if (op === 'gt') minSeq = Math.max(minSeq, Number(v) + 1);
      if (op === 'lt') maxSeq = Math.min(maxSeq, Number(v) - 1);
    }
    for (const f of url.searchParams.getAll('timestamp')) {
      const [op, v] = f.split(':') as [string, string];
      if (op === 'gt') minTs = Math.max(minTs, Number(v));
      if (op === 'lt') maxTs = Math.min(maxTs, Number(v));
      // An inclusive bound as an exclusive one half a second earlier: fake timestamps are whole seconds, and a
      // nanosecond is below a double's precision at this magnitude.
      if (op === 'gte') minTs = Math.max(minTs, Number(v) - 0.5);
    }
    const keep = (msg: FakeMessage): boolean => {
      const ts = Number(msg.consensus_timestamp);
      return msg.sequence_number >= minSeq && msg.sequence_number <= maxSeq && ts > minTs && ts < maxTs;
    };
    const list: FakeMessage[] = [];
    if (order === 'desc') {
      for (let i = all.length - 1; i >= 0 && list.length < limit; i--) if (keep(all[i]!)) list.push(all[i]!);
    } else {
      // Messages are appended in timestamp order, so the first match can be found by bisection.
      let lo = 0;
      let hi = all.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (Number(all[mid]!.consensus_timestamp) > minTs) hi = mid;
        else lo = mid + 1;
      }
      for (let i = lo; i < all.length && list.length < limit; i++) if (keep(all[i]!)) list.push(all[i]!);
    }
    const page = list.slice(0, limit);
    let next: string | null = null;
    if (page.length === limit) {
      const params = new URLSearchParams(url.search);
      params.delete('timestamp');
      params.append('timestamp', `${order === 'desc' ? 'lt' : 'gt'}:${page.at(-1)!.consensus_timestamp}`);
      next = `/api/v1/topics/${topicId}/messages?${params.toString()}`;
    }
    send(200, { messages: page, links: { next } });
  }
}
