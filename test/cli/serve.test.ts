/**
 * `hcs25 serve` end to end, the real CLI as a child process, for both engines (the embedded PGlite directory and a
 * PostgreSQL server this test starts): emulator + agent fleet → `hcs25 run` → `serve` indexes everything; a second
 * run's signals appear through the API (mirror lag 0); SIGKILL while indexing, restart → nothing lost or repeated,
 * compared with `hcs25 signals --json` / `scores --json` of the same topic. On Postgres, two instances share the
 * database: one indexes, both answer; `--workers 2` runs two server processes on one port, and a new run's scores
 * replace the cached ones on every connection.
 */
import type { ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/index.js';
import type { SubjectScore } from '../../src/score/scores.js';
import type { ReadSignal } from '../../src/read/types.js';
import { spawnCli, startHarness, tempDir, type CliResult, type Harness } from '../publish/helpers.js';
import { startPostgres, type PostgresServer } from '../support/postgres.js';
import { openapiValidator } from '../serve/openapi.js';
import { runCli, useEmulatorEnv } from '../support/cli.js';
import { register as registerRun } from '../../src/cli/run.js';
import { register as registerTopic } from '../../src/cli/topic.js';
import { register as registerSignals } from '../../src/cli/signals.js';
import { register as registerScores } from '../../src/cli/scores.js';

let h: Harness;
let fleet: AgentFleet;
let pg: PostgresServer;
const tmp = tempDir();
let agentsFile: string;
let restoreEnv: () => void = () => undefined;
const check = openapiValidator();

beforeAll(async () => {
  [h, fleet, pg] = await Promise.all([
    startHarness(),
    startAgentFleet({ include: ['perfect', 'wrong', 'plain-http'] }),
    startPostgres(),
  ]);
  agentsFile = join(tmp.dir, 'agents.json');
  writeFileSync(agentsFile, JSON.stringify(fleet.agents));
  // The `local` network: the sample agents listen on 127.0.0.1.
  restoreEnv = useEmulatorEnv(h.node, tmp.dir, { HCS25_NETWORK: 'local' });
}, 120_000);
afterAll(async () => {
  restoreEnv();
  await fleet?.stop();
  await h?.close();
  await pg?.stop();
  tmp.cleanup();
});

/** The commands around the server (topic, run, signals, scores) run in-process; `serve` itself is a child process. */
const cli = (args: string[]) => runCli([registerRun, registerTopic, registerSignals, registerScores], args);

interface Serving {
  child: ChildProcess;
  url: string;
  done: Promise<CliResult>;
  stdout(): string;
}

/** `hcs25 serve` on a free port; resolves once it prints its URL. */
async function serve(topic: string, database: string, extra: string[] = []): Promise<Serving> {
  const { child, done } = spawnCli(h, tmp.dir, [
    'serve',
    '--topic',
    topic,
    '--publisher',
    h.node.operator.accountId,
    '--database',
    database,
    '--port',
    '0',
    ...extra,
  ]);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no URL: ${out}`)), 60_000);
    const look = () => {
      const m = /hcs25 serve: (http:\/\/[^/\s]+)\//.exec(out);
      if (m && out.includes('Ctrl-C stops')) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', look);
    void done.then((r) => reject(new Error(`serve exited ${r.code ?? r.signal}: ${r.stderr}`)));
  });
  return { child, url, done, stdout: () => out };
}

async function getJson<T>(url: string, path: string, template: string): Promise<T> {
  const res = await fetch(`${url}${path}`);
  const body = (await res.json()) as T;
  check(template, res.status, body);
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`${what}: not within ${timeoutMs} ms${last ? ` (${String(last)})` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Every signal the API holds for the topic, by subject, through the paged history. */
async function apiSignals(url: string, subjects: string[]): Promise<ReadSignal[]> {
  const all: ReadSignal[] = [];
  for (const subject of subjects) {
    let cursor: string | null = null;
    do {
      const page: {
        signals: Array<ReadSignal & { links: { hashscan: string | null; mirror: string | null } }>;
        nextCursor: string | null;
      } = await getJson(
        url,
        `/v1/subjects/${encodeURIComponent(subject)}/signals?limit=500${cursor ? `&cursor=${cursor}` : ''}`,
        '/v1/subjects/{subject}/signals',
      );
      // Rows as `hcs25 signals --json` prints them, plus where each is on the local mirror node (no HashScan).
      for (const { links, ...signal } of page.signals) {
        expect(links.hashscan).toBeNull();
        expect(links.mirror).toMatch(
          new RegExp(`^http://.+/api/v1/topics/0\\.0\\.\\d+/messages/${signal.sequenceNumber}$`),
        );
        all.push(signal);
      }
      cursor = page.nextCursor;
    } while (cursor);
  }
  return all.sort((a, b) => a.sequenceNumber - b.sequenceNumber || a.index - b.index);
}

/** What `hcs25 signals --json` and `scores --json` say about the topic. */
async function reference(topic: string): Promise<{ signals: ReadSignal[]; scores: SubjectScore[] }> {
  const s = await cli(['--json', 'signals', '--topic', topic, '--publisher', h.node.operator.accountId]);
  expect(s.code, s.stderr).toBe(0);
  const sc = await cli(['--json', 'scores', '--topic', topic, '--publisher', h.node.operator.accountId, '--no-names']);
  expect(sc.code, sc.stderr).toBe(0);
  return {
    signals: (JSON.parse(s.stdout) as { signals: ReadSignal[] }).signals,
    scores: (JSON.parse(sc.stdout) as { subjects: SubjectScore[] }).subjects,
  };
}

/** The API and the CLI agree: the same signals (none lost, none twice) and the same scores. */
async function expectSameAsCli(url: string, topic: string): Promise<number> {
  const ref = await reference(topic);
  const subjects = [...new Set(ref.signals.map((s) => s.message.subject))];
  const served = await until('the API to hold every signal', async () => {
    const got = await apiSignals(url, subjects);
    return got.length >= ref.signals.length ? got : undefined;
  });
  const key = (s: ReadSignal) => `${s.sequenceNumber}#${s.index}`;
  expect(new Set(served.map(key)).size).toBe(served.length);
  expect(served).toEqual(ref.signals);
  for (const expected of ref.scores) {
    const score = await until(`a current score for ${expected.subject}`, async () => {
      const res = await fetch(`${url}/v1/subjects/${encodeURIComponent(expected.subject)}/score`);
      const body = (await res.json()) as SubjectScore;
      check('/v1/subjects/{subject}/score', res.status, body);
      return res.status === 200 &&
        res.headers.get('x-score-fresh') === 'true' &&
        body.counts.signals === expected.counts.signals
        ? body
        : undefined;
    });
    expect({ total: score.trustScores, confidence: score.trustConfidence, counts: score.counts }).toEqual({
      total: expected.trustScores,
      confidence: expected.trustConfidence,
      counts: expected.counts,
    });
  }
  return ref.signals.length;
}

async function runOnce(topic: string, name: string, agents = agentsFile): Promise<void> {
  const r = await cli([
    'run',
    '--agents',
    agents,
    '--topic',
    topic,
    '--state-dir',
    join(tmp.dir, name),
    '--evals',
    'math,availability',
  ]);
  expect(r.code, r.stderr).toBe(0);
}

async function stop(s: Serving, signal: NodeJS.Signals = 'SIGTERM'): Promise<CliResult> {
  s.child.kill(signal);
  return s.done;
}

describe.each([
  ['PGlite (embedded, a directory)', () => join(tmp.dir, `db-${Math.random().toString(36).slice(2)}`)],
  ['PostgreSQL (a server)', () => pg.url],
])('hcs25 serve on %s', (engine, database) => {
  it('indexes a run, serves the next run within moments, and survives SIGKILL mid-indexing without losing or repeating', async () => {
    const db = database();
    const topic = (await cli(['topic', 'create'])).stdout.trim();
    await runOnce(topic, `${topic}-1`);

    let s = await serve(topic, db);
    expect(s.stdout()).toMatch(/topic \d+\.\d+\.\d+ · (pglite|postgres) at /);
    const first = await expectSameAsCli(s.url, topic);
    expect(first).toBeGreaterThan(0);

    // A second run while serve follows the topic: its signals appear through the API.
    const before = await getJson<{ topics: Array<{ lastSequence: number }> }>(s.url, '/v1/topics', '/v1/topics');
    await runOnce(topic, `${topic}-2`);
    const published = Date.now();
    await until('the second run indexed', async () => {
      const t = await getJson<{ topics: Array<{ lastSequence: number; counts: { signals: number } }> }>(
        s.url,
        '/v1/topics',
        '/v1/topics',
      );
      return t.topics[0]!.lastSequence > before.topics[0]!.lastSequence && t.topics[0]!.counts.signals > first
        ? true
        : undefined;
    });
    // For the record, not an assertion (speed belongs in benches): how long the run took to show through the API.
    console.info(`${engine}: the second run was served ${Date.now() - published} ms after it was published`);
    expect(await expectSameAsCli(s.url, topic)).toBeGreaterThan(first);
    const graceful = await stop(s);
    expect(graceful.code, graceful.stderr).toBe(0);
    expect(graceful.stderr).toContain('stopping (SIGTERM)');

    // A backlog (two runs while nobody indexes), then SIGKILL as soon as indexing has begun, and a restart.
    await runOnce(topic, `${topic}-3`);
    await runOnce(topic, `${topic}-4`);
    s = await serve(topic, db);
    const killed = await stop(s, 'SIGKILL');
    expect(killed.signal).toBe('SIGKILL');
    s = await serve(topic, db);
    try {
      await expectSameAsCli(s.url, topic);
    } finally {
      await stop(s);
    }
  }, 300_000);
});

describe('two hcs25 serve instances on one PostgreSQL database', () => {
  it('one indexes, both answer the same', async () => {
    const db = await pg.database('shared');
    const topic = (await cli(['topic', 'create'])).stdout.trim();
    await runOnce(topic, `${topic}-1`);
    const a = await serve(topic, db);
    // The first holds the lock by the time it indexed the run; the second then only answers.
    await expectSameAsCli(a.url, topic);
    const b = await serve(topic, db);
    try {
      expect(b.stdout()).toContain('answering (another instance indexes)');
      await expectSameAsCli(b.url, topic);
      await runOnce(topic, `${topic}-2`);
      await expectSameAsCli(b.url, topic);
      // The same status from both, but for the lag: now − last consensus time, at the moment each answered.
      const status = async (u: string) =>
        (await getJson<{ topics: Array<Record<string, unknown>> }>(u, '/v1/topics', '/v1/topics')).topics.map(
          ({ lagMs: _, ...t }) => t,
        );
      expect(await status(b.url)).toEqual(await status(a.url));
    } finally {
      await Promise.all([stop(a), stop(b)]);
    }
  }, 300_000);
});

/** One score lookup on a connection of its own (the cluster hands each new connection to the next worker). */
function lookup(url: string, subject: string): Promise<{ status: number; etag: string; body: SubjectScore }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/v1/subjects/${encodeURIComponent(subject)}/score`, { agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () =>
        resolve({ status: res.statusCode!, etag: String(res.headers.etag), body: JSON.parse(text) as SubjectScore }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('hcs25 serve --workers', () => {
  it('refuses workers on the embedded database (one process owns it)', async () => {
    const r = await spawnCli(h, tmp.dir, ['serve', '--topic', '0.0.1234', '--workers', '2', '--port', '0']).done;
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--workers needs --database postgres://');
  });

  it('refuses a topic the mirror node does not know, in one line, before opening the database', async () => {
    const r = await spawnCli(h, tmp.dir, ['serve', '--topic', '0.0.987654', '--port', '0']).done;
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^hcs25: the mirror node at \S+ does not know topic 0\.0\.987654$/m);
    expect(r.stdout).not.toContain('hcs25 serve:');
  });

  it('two workers on one port and one PostgreSQL database: one indexes, every connection gets the new score and ETag after a new run', async () => {
    const db = await pg.database('workers');
    const topic = (await cli(['topic', 'create'])).stdout.trim();
    await runOnce(topic, `${topic}-1`);
    const s = await serve(topic, db, ['--workers', '2']);
    try {
      expect(s.stdout()).toContain('2 workers (one indexes, all answer)');
      await expectSameAsCli(s.url, topic);
      const { scores } = await reference(topic);
      const CONNECTIONS = 8;
      // Every worker answers from its cache now: each connection of its own asks each subject.
      const old = new Map<string, string>();
      for (const expected of scores) {
        const answers = await Promise.all(Array.from({ length: CONNECTIONS }, () => lookup(s.url, expected.subject)));
        expect(new Set(answers.map((a) => a.etag)).size).toBe(1);
        expect(answers[0]!.body.counts).toEqual(expected.counts);
        old.set(expected.subject, answers[0]!.etag);
      }
      await runOnce(topic, `${topic}-2`);
      const next = await reference(topic);
      for (const expected of next.scores) {
        await until(`the new score of ${expected.subject} on every connection`, async () => {
          const answers = await Promise.all(Array.from({ length: CONNECTIONS }, () => lookup(s.url, expected.subject)));
          return answers.every(
            (a) => a.status === 200 && a.body.counts.signals === expected.counts.signals && a.etag === answers[0]!.etag,
          )
            ? true
            : undefined;
        });
        const again = await lookup(s.url, expected.subject);
        expect(again.etag).not.toBe(old.get(expected.subject));
        expect({ total: again.body.trustScores, counts: again.body.counts }).toEqual({
          total: expected.trustScores,
          counts: expected.counts,
        });
      }
    } finally {
      const stopped = await stop(s);
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(stopped.stderr).toContain('stopping 2 workers');
    }
  }, 300_000);
});

describe('hcs25 serve webhooks', () => {
  it('with an admin token, an agent going down reaches a registered receiver, signed; the token is never printed', async () => {
    // An agent that answers, then is gone (the same endpoint, so the same subject).
    const agent = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('hello'));
    });
    await new Promise<void>((r) => agent.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(agent.address() as AddressInfo).port}/chat`;
    const agents = join(tmp.dir, 'flappy.json');
    writeFileSync(agents, JSON.stringify([{ name: 'flappy', protocol: 'http', endpoint }]));
    const got: Array<{ headers: IncomingHttpHeaders; body: string }> = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (d: string) => (body += d));
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const token = 'cli-admin-token-5f2c9a7e41d08b36';
    const tokenFile = join(tmp.dir, 'admin-token');
    writeFileSync(tokenFile, `${token}\n`);

    const topic = (await cli(['topic', 'create'])).stdout.trim();
    await runOnce(topic, `${topic}-up`, agents);
    const s = await serve(topic, join(tmp.dir, 'db-hooks'), ['--admin-token-file', tokenFile, '--allow-private-hooks']);
    try {
      await until('the agent scored', async () => {
        const page = await getJson<{ subjects: unknown[] }>(s.url, '/v1/subjects', '/v1/subjects');
        return page.subjects.length === 1 ? true : undefined;
      });
      const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const created = await fetch(`${s.url}/v1/hooks`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/alerts`,
          events: ['availability-changed'],
        }),
      });
      expect(created.status).toBe(201);
      const { hook, secret } = (await created.json()) as { hook: { id: string }; secret: string };
      expect((await fetch(`${s.url}/v1/hooks`)).status).toBe(401);

      await new Promise<void>((r) => agent.close(() => r()));
      await runOnce(topic, `${topic}-down`, agents);
      await until('the alert delivered', async () => (got.length > 0 ? true : undefined), 60_000);
      const [alert] = got;
      const signed = createHmac('sha256', secret)
        .update(`${alert!.headers['x-hcs25-timestamp']}.${alert!.body}`)
        .digest('hex');
      expect(alert!.headers['x-hcs25-signature']).toBe(`sha256=${signed}`);
      expect(JSON.parse(alert!.body)).toMatchObject({
        event: 'availability-changed',
        hook: hook.id,
        topic,
        reachable: false,
        previous: true,
      });
    } finally {
      agent.close();
      receiver.close();
      const stopped = await stop(s);
      expect(stopped.code, stopped.stderr).toBe(0);
      expect(`${stopped.stdout}${stopped.stderr}`).not.toContain(token);
    }
  }, 180_000);
});
