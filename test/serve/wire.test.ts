/**
 * Score lookups on raw sockets: a plain lookup gets the same answer as one naming the topic (status, headers and body,
 * Date aside), pipelined requests are answered in order (also when each waits for the store, and mixed with other
 * routes), and a request with a body, bad framing or HTTP/1.0 is answered as HTTP says.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import { ScoreCache } from '../../src/serve/cache.js';
import { ServeEvents } from '../../src/serve/events.js';
import { startHttpServer, type ServeHttp } from '../../src/serve/http.js';
import { livePage } from '../../src/serve/live.js';
import type { ServeStore, StoredScore } from '../../src/serve/store/types.js';

const TOPIC = '0.0.4242';
const KNOWN = ['uaid:aid:a;uid=0;proto=a2a;nativeId=a.example', 'uaid:aid:b;uid=0;proto=mcp;nativeId=b.example'];
const PENDING_SUBJECT = 'uaid:aid:p;uid=0;nativeId=p.example';
const path = (subject: string) => `/v1/subjects/${encodeURIComponent(subject)}/score`;

/** The read side a lookup touches. */
function fakeStore(): ServeStore {
  const store = {
    engine: 'pglite',
    revision: async () => 1,
    watch: () => () => {},
    changesSince: async () => [],
    topics: async () => [],
    async subjectScore(subject: string): Promise<StoredScore | null> {
      if (subject === PENDING_SUBJECT) return { topic: TOPIC, subject, fresh: false, score: null };
      if (!KNOWN.includes(subject)) return null;
      return {
        topic: TOPIC,
        subject,
        fresh: subject === KNOWN[0],
        score: { subject, trustScores: { total: KNOWN.indexOf(subject) + 50 }, adapters: [], components: {} },
      } as unknown as StoredScore;
    },
    storedScores: async () => ({ items: [], next: null }),
    close: async () => {},
  };
  return store as unknown as ServeStore;
}

interface Answer {
  status: number;
  headers: Array<[string, string]>;
  body: string;
}

/** Sends `bytes` on one connection and reads `count` answers (Content-Length framed; 304 and HEAD have no body). */
function exchange(
  url: string,
  bytes: string | string[],
  count: number,
  heads: boolean[] = [],
): Promise<{ answers: Answer[]; closed: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let data = Buffer.alloc(0);
    const answers: Answer[] = [];
    let closed = false;
    const finish = () => resolve({ answers, closed });
    socket.on('error', reject);
    socket.on('connect', async () => {
      // Several chunks: written one by one with a pause, so the server reads them as separate reads.
      for (const chunk of Array.isArray(bytes) ? bytes : [bytes]) {
        socket.write(chunk, 'latin1');
        if (Array.isArray(bytes)) await new Promise((r) => setTimeout(r, 5));
      }
    });
    socket.on('data', (chunk) => {
      data = Buffer.concat([data, chunk]);
      for (;;) {
        const end = data.indexOf('\r\n\r\n');
        if (end < 0) break;
        const lines = data.toString('latin1', 0, end).split('\r\n');
        const status = Number(lines[0]!.split(' ')[1]);
        const headers = lines
          .slice(1)
          .map((l): [string, string] => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]);
        const length =
          status === 304 || heads[answers.length] ? 0 : Number(headers.find(([k]) => k === 'content-length')?.[1] ?? 0);
        if (data.length < end + 4 + length) break;
        answers.push({ status, headers, body: data.toString('utf8', end + 4, end + 4 + length) });
        data = data.subarray(end + 4 + length);
      }
      if (answers.length >= count) {
        // A server that closes after the last answer does so at once; wait briefly to see it.
        setTimeout(() => {
          socket.destroy();
          finish();
        }, 50);
      }
    });
    socket.on('end', () => {
      closed = true;
    });
    socket.on('close', () => {
      closed = true;
      if (answers.length < count) reject(new Error(`closed after ${answers.length} of ${count} answers`));
    });
  });
}

const get = (target: string, extra = '') => `GET ${target} HTTP/1.1\r\nHost: test\r\n${extra}\r\n`;
/** Headers as a comparable list: Date differs by the second, so it is only checked to be there. */
const comparable = (a: Answer) => {
  expect(a.headers.some(([k]) => k === 'date')).toBe(true);
  return { status: a.status, body: a.body, headers: a.headers.filter(([k]) => k !== 'date').sort() };
};

let server: ServeHttp;
let uncached: ServeHttp;

async function start(cacheBytes: number | undefined, cors: string[]): Promise<ServeHttp> {
  const store = fakeStore();
  const scores = new ScoreCache(store, cacheBytes);
  const events = new ServeEvents({ store, scores, maxClients: 2 });
  return startHttpServer({
    store,
    events,
    topics: [TOPIC],
    publishers: [],
    scoring: DEFAULT_SCORING_CONFIG,
    live: livePage({ store, scoring: DEFAULT_SCORING_CONFIG, publishers: [], revision: async () => 1 }),
    port: 0,
    cors,
    limits: { requestsPerSecond: 0 },
  });
}

beforeAll(async () => {
  server = await start(undefined, ['https://app.example']);
  // Every lookup asks the store: each answer waits for a promise.
  uncached = await start(0, []);
});

afterAll(async () => {
  await server?.close();
  await uncached?.close();
});

describe('score lookups on the wire', () => {
  it('answers a plain lookup exactly as one naming the topic (status, headers, body), for 200, 304, 404, 400, 503 and CORS', async () => {
    const first = (await exchange(server.url, get(path(KNOWN[0]!)), 1)).answers[0]!;
    const etag = first.headers.find(([k]) => k === 'etag')![1];
    const cases = [
      [path(KNOWN[0]!), ''],
      [path(KNOWN[1]!), 'Origin: https://app.example\r\n'],
      [path(KNOWN[1]!), 'Origin: https://evil.example\r\n'],
      [path(KNOWN[0]!), `If-None-Match: "x", ${etag}\r\nOrigin: https://app.example\r\n`],
      [path('uaid:aid:nobody'), ''],
      [path(PENDING_SUBJECT), ''],
      ['/v1/subjects/%E0%A4%A/score', ''],
    ] as const;
    const statuses: number[] = [];
    for (const [target, extra] of cases) {
      const plain = (await exchange(server.url, get(target, extra), 1)).answers[0]!;
      const withTopic = (await exchange(server.url, get(`${target}?topic=${TOPIC}`, extra), 1)).answers[0]!;
      expect(comparable(plain), `${target} ${extra}`).toEqual(comparable(withTopic));
      statuses.push(plain.status);
    }
    expect(statuses).toEqual([200, 200, 200, 304, 404, 503, 400]);
    expect(first.headers).toContainEqual(['x-score-fresh', 'true']);
    expect(JSON.parse(first.body)).toEqual({
      subject: KNOWN[0],
      trustScores: { total: 50 },
      adapters: [],
      components: {},
    });
  });

  it('answers pipelined lookups in order, also when each waits for the store, and across a request split byte by byte', async () => {
    const targets = [KNOWN[1]!, 'uaid:aid:nobody', KNOWN[0]!, KNOWN[1]!];
    for (const url of [server.url, uncached.url]) {
      const { answers } = await exchange(url, targets.map((s) => get(path(s))).join(''), targets.length);
      expect(answers.map((a) => a.status)).toEqual([200, 404, 200, 200]);
      expect(
        answers.map((a) => (a.status === 200 ? (JSON.parse(a.body) as { subject: string }).subject : null)),
      ).toEqual([KNOWN[1], null, KNOWN[0], KNOWN[1]]);
    }
    const split = [...get(path(KNOWN[0]!))];
    const { answers } = await exchange(server.url, split, 1);
    expect(answers[0]!.status).toBe(200);
  });

  it('answers lookups and other routes pipelined on one connection, in order', async () => {
    const bytes = [
      get(path(KNOWN[0]!)),
      get('/healthz'),
      get(path(KNOWN[1]!)),
      get(`${path(KNOWN[0]!)}?topic=${TOPIC}`),
    ].join('');
    for (const url of [server.url, uncached.url]) {
      const { answers } = await exchange(url, bytes, 4);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
      expect(JSON.parse(answers[1]!.body)).toEqual({ status: 'ok' });
      expect((JSON.parse(answers[2]!.body) as { subject: string }).subject).toBe(KNOWN[1]);
      expect(comparable(answers[3]!)).toEqual(comparable(answers[0]!));
    }
  });

  it('reads a body as a body (no smuggled request), refuses a request without Host, closes after HTTP/1.0', async () => {
    // A GET with a body: node:http reads the body as the body (one answer), so it is not a second request.
    const smuggled = `GET ${path(KNOWN[0]!)} HTTP/1.1\r\nHost: test\r\nContent-Length: ${get('/healthz').length}\r\n\r\n${get('/healthz')}`;
    const body = await exchange(server.url, smuggled + get(path(KNOWN[1]!)), 2);
    expect(body.answers.map((a) => a.status)).toEqual([200, 200]);
    expect((JSON.parse(body.answers[1]!.body) as { subject: string }).subject).toBe(KNOWN[1]);
    // No Host: node:http refuses it (and closes).
    const noHost = await exchange(server.url, `GET ${path(KNOWN[0]!)} HTTP/1.1\r\n\r\n`, 1);
    expect(noHost.answers[0]!.status).toBe(400);
    const old = await exchange(server.url, `GET ${path(KNOWN[0]!)} HTTP/1.0\r\nHost: test\r\n\r\n`, 1);
    expect(old.answers[0]!.status).toBe(200);
    expect(old.closed).toBe(true);
  });

  it('closes after the answer when asked to (Connection: close), and answers HEAD without a body', async () => {
    const head = await exchange(
      server.url,
      `HEAD ${path(KNOWN[0]!)} HTTP/1.1\r\nHost: test\r\n\r\n${get(path(KNOWN[1]!), 'Connection: close\r\n')}`,
      2,
      [true],
    );
    expect(head.answers.map((a) => a.status)).toEqual([200, 200]);
    expect(head.answers[0]!.body).toBe('');
    expect(head.answers[1]!.headers).toContainEqual(['connection', 'close']);
    expect(head.closed).toBe(true);
  });
});
