/**
 * The indexer against the embedded emulator: v1, v2 and packed signals, records, garbage; resume; the gRPC doorbell and
 * its REST fallback; a mirror REST outage.
 */
import { createServer, type Server } from 'node:http';
import { TopicMessageSubmitTransaction } from '@hashgraph/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHcs25Client, type Hcs25Client } from '../../src/client.js';
import { collectTopicSignals, countReasons, signalRow } from '../../src/read/reader.js';
import { createTopic } from '../../src/hedera/tx.js';
import { buildSignalMessage } from '../../src/format/write-v1.js';
import { buildRevealMessageV2 } from '../../src/format/write.js';
import { startIndexer, type Indexer } from '../../src/serve/indexer.js';
import { openStore } from '../../src/serve/store/index.js';
import type { ServeStore } from '../../src/serve/store/types.js';
import { emulatorConfig, startHarness, tempDir, type Harness } from '../publish/helpers.js';
import { fleetSignals } from '../format/fleet.js';
import { evalResult, RUN, RUN_KEY } from '../format/fixtures.js';
import { packed } from './helpers.js';
import { discoverAgents } from '../../src/discover/discover-agents.js';
import { probe } from '../support/signals.js';

let h: Harness;
let store: ServeStore;
const tmp = tempDir();
const fleet = fleetSignals(30);

async function submit(topic: string, bodies: readonly Buffer[]): Promise<void> {
  for (const body of bodies) {
    const tx = new TopicMessageSubmitTransaction()
      .setTopicId(topic)
      .setMessage(body)
      .setMaxChunks(1)
      .setChunkSize(1024);
    await (await tx.execute(h.client)).getReceipt(h.client);
  }
}

function clientWith(env: { mirrorRestUrl?: string; mirrorGrpc?: string } = {}): Hcs25Client {
  const config = emulatorConfig(h, tmp.dir, {});
  const network = {
    ...config.network,
    ...(env.mirrorRestUrl ? { mirrorRestUrl: env.mirrorRestUrl } : {}),
    ...(env.mirrorGrpc !== undefined ? { mirrorGrpc: env.mirrorGrpc ? [env.mirrorGrpc] : [] } : {}),
  };
  return createHcs25Client({ ...config, network }, { mirror: { retries: 0, minBackoffMs: 10 } });
}

interface Running {
  indexer: Indexer;
  notes: string[];
  stop(): Promise<void>;
}

function run(client: Hcs25Client, topics: string[], extra: Partial<Parameters<typeof startIndexer>[1]> = {}): Running {
  const abort = new AbortController();
  const notes: string[] = [];
  const indexer = startIndexer(client, {
    store,
    topics,
    signal: abort.signal,
    minPollMs: 20,
    maxPollMs: 100,
    minRetryMs: 50,
    maxRetryMs: 200,
    onNote: (n) => notes.push(n),
    ...extra,
  });
  return {
    indexer,
    notes,
    async stop() {
      abort.abort();
      await indexer.done;
      await client.close();
    },
  };
}

async function signalCount(topic: string): Promise<number> {
  return (await store.topics()).find((t) => t.topic === topic)?.counts.signals ?? 0;
}

beforeAll(async () => {
  h = await startHarness();
  store = await openStore('memory://', { stateDir: tmp.dir });
}, 120_000);

afterAll(async () => {
  await store?.close();
  await h?.close();
  tmp.cleanup();
});

describe('startIndexer', () => {
  it('indexes v1, v2 and packed signals, records and rejections exactly as hcs25 signals reads them; resumes; follows', async () => {
    const topic = await createTopic(h.client, { memo: 'hcs-25:0:86400' });
    const reveal = buildRevealMessageV2({
      run: RUN,
      key: RUN_KEY.toString('base64url'),
      seed: 's',
      generator: 'simple@1',
      grader: 'first-token@1',
    }).json;
    await submit(topic, [
      Buffer.from(buildSignalMessage(evalResult(), { run: RUN, runKey: RUN_KEY }).json),
      ...packed(fleet.slice(0, 6), 'none'),
      ...packed(fleet.slice(6, 60), 'dense'),
      ...packed(fleet.slice(60, 75), 'subject'),
      ...packed(fleet.slice(0, 2), 'none'), // duplicates
      Buffer.from('{"p":"hcs-25","op":"signal"'),
      Buffer.from(reveal),
    ]);
    const expected = await collectTopicSignals({ topic, mirror: h.mirror });
    expect(expected.signals.length).toBe(76);

    // Small batches: several are stored while the next ones are read (applied in order, each with its cursor).
    const first = run(clientWith(), [topic], { batchSize: 7 });
    await expect.poll(() => signalCount(topic), { timeout: 15_000 }).toBe(76);
    await first.stop();
    const [status] = (await store.topics()).filter((t) => t.topic === topic);
    expect(status!.counts.rejected).toEqual(countReasons(expected.rejected));
    expect(status!.counts.records).toEqual({ reveal: 1 });
    expect(status!.lastSequence).toBe(expected.lastSequence);
    const stored = await store.subjectSignals(fleet[0]!.subject, { topic, order: 'asc' });
    expect(stored.items.map(({ topic: _, ...s }) => s)).toEqual(
      expected.signals.filter((s) => s.message.subject === fleet[0]!.subject).map(signalRow),
    );

    // Restart: resumes from the cursor, stores nothing twice, then follows new messages.
    const second = run(clientWith(), [topic]);
    await submit(topic, packed(fleet.slice(75, 90), 'dense'));
    await expect.poll(() => signalCount(topic), { timeout: 15_000 }).toBe(91);
    await expect
      .poll(async () => (await store.subjectScore(fleet[80]!.subject, { topic }))?.fresh, { timeout: 15_000 })
      .toBe(true);
    await second.stop();
    const after = (await store.topics()).find((t) => t.topic === topic)!;
    expect(after.counts.rejected).toEqual(status!.counts.rejected);
  }, 60_000);

  it('a topic indexed under another publisher allow-list is indexed again from its start: a removed publisher leaves the scores', async () => {
    const topic = await createTopic(h.client, { memo: 'hcs-25:0:86400' });
    await submit(topic, packed(fleet.slice(0, 12), 'dense'));
    const operator = h.node.operator.accountId;
    const subject = fleet[0]!.subject;
    const scored = async () => (await store.subjectScore(subject, { topic }))?.score ?? null;

    const open = run(clientWith(), [topic]);
    await expect.poll(() => signalCount(topic), { timeout: 15_000 }).toBe(12);
    await expect.poll(scored, { timeout: 15_000 }).not.toBeNull();
    await open.stop();

    // The operator is no longer trusted: every signal of the topic is its, so nothing stays.
    const other = run(clientWith(), [topic], { publishers: ['0.0.9999'] });
    await expect
      .poll(
        async () => (await store.topics()).find((t) => t.topic === topic)?.counts.rejected['publisher-not-allowed'],
        { timeout: 15_000 },
      )
      .toBeGreaterThan(0);
    await expect.poll(scored, { timeout: 15_000 }).toBeNull();
    expect(await signalCount(topic)).toBe(0);
    await other.stop();
    expect(
      other.notes.some((n) =>
        n.includes(`${topic}: indexed under another publisher allow-list before: indexing it again from the start`),
      ),
    ).toBe(true);

    // Trusted again: its signals are read again, and the same list at the next start changes nothing.
    for (let i = 0; i < 2; i++) {
      const trusted = run(clientWith(), [topic], { publishers: [operator] });
      await expect.poll(() => signalCount(topic), { timeout: 15_000 }).toBe(12);
      await expect.poll(scored, { timeout: 15_000 }).not.toBeNull();
      await trusted.stop();
      expect(trusted.notes.some((n) => n.includes('indexing it again'))).toBe(i === 0);
    }
  }, 60_000);

  it('names subjects from the registry entry their signals cite; an unreadable registry leaves them unnamed, indexing on', async () => {
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    const record = { name: 'Calc \u202eBot', protocol: 'a2a', endpoint: 'https://calc.example.com/a2a' };
    await submit(registry, [
      Buffer.from(JSON.stringify({ p: 'hcs-2', op: 'register', metadata: JSON.stringify(record) })),
    ]);
    const listed = async () => {
      const c = clientWith();
      try {
        return (await discoverAgents(c, { registry })).agents;
      } finally {
        await c.close();
      }
    };
    await expect.poll(async () => (await listed()).length, { timeout: 15_000 }).toBe(1);
    const [agent] = await listed();
    const subject = agent!.subject;
    const stranger = fleet[0]!.subject;
    const missing = '0.0.999999';
    const topic = await createTopic(h.client, { memo: 'hcs-25:0:86400' });
    const at = Date.now();
    await submit(topic, [
      Buffer.from(JSON.stringify(probe(subject, { seq: 1, at, sources: [`hcs://2/${registry}`] }).message)),
      Buffer.from(JSON.stringify(probe(stranger, { seq: 2, at, sources: [`hcs://2/${missing}`] }).message)),
    ]);
    const r = run(clientWith(), [topic], { identityPollMs: 50, identities: { minRetryMs: 60_000 } });
    await expect.poll(() => signalCount(topic), { timeout: 15_000 }).toBe(2);
    await expect
      .poll(async () => (await store.subjectScore(subject, { topic }))?.identity?.status, { timeout: 15_000 })
      .toBe('resolved');
    expect((await store.subjectScore(subject, { topic }))?.identity).toEqual({
      // The registry's text, with its bidi override made harmless.
      name: expect.stringMatching(/^Calc\s+Bot$/),
      protocol: 'a2a',
      endpoint: 'https://calc.example.com/a2a',
      accountId: null,
      registry,
      entry: `hcs://2/${registry}#1`,
      sequence: 1,
      status: 'resolved',
      note: null,
    });
    await expect
      .poll(async () => (await store.subjectScore(stranger, { topic }))?.identity?.status, { timeout: 15_000 })
      .toBe('unavailable');
    expect((await store.subjectScore(stranger, { topic }))?.identity?.note).toMatch(/does not exist/);
    expect(r.notes.some((n) => n.startsWith(`registry ${missing}: cannot be read`))).toBe(true);
    // Indexing goes on meanwhile.
    await submit(topic, [Buffer.from(JSON.stringify(probe(subject, { seq: 3, at: at + 1000 }).message))]);
    await expect.poll(() => signalCount(topic), { timeout: 15_000 }).toBe(3);
    await r.stop();
  }, 60_000);

  it('rings on mirror gRPC; falls back to REST polling when the subscription fails, and returns', async () => {
    const topic = await createTopic(h.client, { memo: 'hcs-25:0:86400' });
    h.node.faults.injectGrpcError('subscribeTopic', 14, 1);
    const r = run(clientWith(), [topic], { grpcPollMs: 60_000, maxPollMs: 100 });
    await expect
      .poll(() => r.notes.some((n) => n.includes('mirror gRPC subscription failed')), { timeout: 15_000 })
      .toBe(true);
    await submit(topic, packed(fleet.slice(0, 3), 'none'));
    await expect.poll(() => signalCount(topic), { timeout: 15_000 }).toBe(3);
    // Back on gRPC (retried after 1 s): the long poll (60 s) is not what brings the next signals in.
    await expect
      .poll(async () => (await store.topics()).find((t) => t.topic === topic)?.source, { timeout: 15_000 })
      .toBe('grpc');
    await new Promise((resolve) => setTimeout(resolve, 300));
    await submit(topic, packed(fleet.slice(3, 6), 'none'));
    await expect.poll(() => signalCount(topic), { timeout: 10_000 }).toBe(6);
    await r.stop();
  }, 60_000);

  it('without mirror gRPC it polls REST', async () => {
    const topic = await createTopic(h.client, { memo: 'hcs-25:0:86400' });
    const r = run(clientWith({ mirrorGrpc: '' }), [topic]);
    await submit(topic, packed(fleet.slice(0, 4), 'none'));
    await expect.poll(() => signalCount(topic), { timeout: 15_000 }).toBe(4);
    expect((await store.topics()).find((t) => t.topic === topic)?.source).toBe('rest');
    await r.stop();
  }, 60_000);

  it('survives a mirror REST outage: says so, backs off, catches up without losing or repeating anything', async () => {
    const topic = await createTopic(h.client, { memo: 'hcs-25:0:86400' });
    let down = false;
    const proxy: Server = createServer((req, res) => {
      if (down) {
        res.writeHead(503).end('down');
        return;
      }
      fetch(h.node.mirrorRestUrl + req.url!).then(
        async (r) =>
          res
            .writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' })
            .end(Buffer.from(await r.arrayBuffer())),
        () => res.writeHead(502).end(),
      );
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(proxy.address() as { port: number }).port}`;
    const r = run(clientWith({ mirrorRestUrl: url, mirrorGrpc: '' }), [topic]);
    await submit(topic, packed(fleet.slice(0, 3), 'none'));
    await expect.poll(() => signalCount(topic), { timeout: 15_000 }).toBe(3);
    down = true;
    await submit(topic, packed(fleet.slice(3, 9), 'none'));
    await expect
      .poll(() => r.notes.some((n) => n.includes(`${topic}:`) && n.includes('retrying in')), { timeout: 15_000 })
      .toBe(true);
    expect((await store.topics()).find((t) => t.topic === topic)?.note).toContain('retrying in');
    down = false;
    await expect.poll(() => signalCount(topic), { timeout: 15_000 }).toBe(9);
    await expect
      .poll(async () => (await store.topics()).find((t) => t.topic === topic)?.note, { timeout: 15_000 })
      .toBeNull();
    expect(r.notes.some((n) => n.includes('reachable again'))).toBe(true);
    await r.stop();
    proxy.close();
    expect((await store.topics()).find((t) => t.topic === topic)?.counts.rejected).toEqual({});
  }, 60_000);

  it('lets timers and I/O run between rescoring rounds while a backlog is scored (PGlite answers without a turn)', async () => {
    // A store whose every round answers at once, as PGlite does: only the rescoring loop can hand the event loop a turn.
    let rounds = 0;
    const backlog = 1000;
    const double = {
      tryIndexerLock: async () => true,
      rescoreDirty: async () => ({ subjects: 1, more: ++rounds < backlog }),
      markStale: async () => 0,
    } as unknown as ServeStore;
    const stop = new AbortController();
    const indexer = startIndexer({} as Hcs25Client, {
      store: double,
      topics: [],
      identities: false,
      signal: stop.signal,
    });
    const roundsBeforeTimer = await new Promise<number>((resolve) => setTimeout(() => resolve(rounds), 0));
    stop.abort();
    await indexer.done;
    expect(roundsBeforeTimer).toBeLessThan(backlog);
  });
});
