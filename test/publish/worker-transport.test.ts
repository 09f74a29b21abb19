/**
 * Submission through the worker thread (the built `dist/publish/worker-transport.js`: a worker thread runs
 * JavaScript, not the TypeScript sources). The submitter stays here with the journal; the worker only builds, signs,
 * sends and asks for receipts. Every message lands once, each id is journaled before its receipt, the SDK's
 * failures are classified in the worker exactly as in-process, and a worker that dies stops submission loudly.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJournal } from '../../src/publish/journal.js';
import { sdkTransport, type SubmitTransport } from '../../src/publish/sdk-transport.js';
import type { SubmitterOptions } from '../../src/publish/submitter.js';
import type { startWorkerTransport as StartWorkerTransport } from '../../src/publish/worker-transport.js';
import { countBy, messageFor, readTopic, startHarness, submitterSetup, tempDir, type Harness } from './helpers.js';

let h: Harness;
let startWorkerTransport: typeof StartWorkerTransport;
const tmp = tempDir();

beforeAll(async () => {
  h = await startHarness();
  ({ startWorkerTransport } = (await import(new URL('../../dist/publish/worker-transport.js', import.meta.url).href)) as { startWorkerTransport: typeof StartWorkerTransport });
});
afterAll(async () => {
  await h.close();
  tmp.cleanup();
});

function worker(untilReady?: () => SubmitTransport) {
  return startWorkerTransport({ network: h.config.network, operator: h.config.operator!, tuning: { grpcDeadlineMs: 3_000, requestTimeoutMs: 20_000 }, ...(untilReady && { untilReady }) });
}

function setup(n: number, prefix: string, transport: SubmitTransport, extra: Partial<SubmitterOptions> = {}) {
  return submitterSetup(h, tmp.dir, n, prefix, { transport, ...extra });
}

describe('Submitter through the worker transport', () => {
  it('puts every message on the topic exactly once and journals each id before its receipt', async () => {
    const transport = worker();
    try {
      const { topicId, keys, journal, submitter } = await setup(40, 'w-basic', transport, { window: 16 });
      const outcomes = await Promise.all(keys.map((key) => submitter.submit({ key, message: messageFor(key) })));
      await journal.close();
      expect(outcomes.map((o) => o.status)).toEqual(keys.map(() => 'confirmed'));
      const onTopic = await readTopic(h.mirror, topicId, keys.length);
      const counts = countBy(onTopic, (m) => m.message.toString('utf8'));
      for (const key of keys) expect(counts.get(messageFor(key)), key).toBe(1);
      expect(onTopic).toHaveLength(keys.length);
      const { state } = await readJournal(journal.path);
      const lines = readFileSync(journal.path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { t: string; key?: string });
      for (const key of keys) {
        expect(state.signals.get(key)?.receipt?.txId).toBe(state.signals.get(key)?.txIds[0]?.txId);
        expect(lines.findIndex((l) => l.t === 'receipt' && l.key === key)).toBeGreaterThan(lines.findIndex((l) => l.t === 'tx' && l.key === key));
      }
    } finally {
      await transport.close();
    }
  });

  it('retries the transient failures the worker classifies, each message landing once', async () => {
    const transport = worker();
    try {
      const { topicId, keys, journal, submitter } = await setup(20, 'w-faults', transport, { window: 8 });
      h.node.faults.injectPrecheck('submitMessage', 'BUSY', 6);
      h.node.faults.injectGrpcError('submitMessage', 14, 2);
      h.node.faults.injectGrpcError('getTransactionReceipts', 14, 2);
      const outcomes = await Promise.all(keys.map((key) => submitter.submit({ key, message: messageFor(key) })));
      h.node.faults.clear();
      await journal.close();
      expect(outcomes.every((o) => o.status === 'confirmed')).toBe(true);
      expect(submitter.stats.retries).toBeGreaterThan(0);
      expect(await readTopic(h.mirror, topicId, keys.length)).toHaveLength(keys.length);
    } finally {
      h.node.faults.clear();
      await transport.close();
    }
  });

  it('turns a fatal precheck into the same SubmitError as in-process, and stops', async () => {
    const transport = worker();
    try {
      const { journal, submitter } = await setup(3, 'w-fatal', transport, { window: 1 });
      h.node.faults.injectPrecheck('submitMessage', 'INVALID_TOPIC_ID', 1);
      const first = await submitter.submit({ key: 'w-fatal-0', message: messageFor('w-fatal-0') });
      const rest = await Promise.all(['w-fatal-1', 'w-fatal-2'].map((key) => submitter.submit({ key, message: messageFor(key) })));
      await journal.close();
      expect(first.status).toBe('unsent');
      expect(submitter.fatal?.code).toBe('SUBMIT_INVALID_TOPIC_ID');
      expect(submitter.fatal?.hint).toMatch(/--topic/);
      expect(rest.map((o) => o.status)).toEqual(['unsent', 'unsent']);
    } finally {
      h.node.faults.clear();
      await transport.close();
    }
  });

  it('serves requests in-process while the worker loads, then through the worker', async () => {
    let here = 0;
    const inProcess = sdkTransport(h.client, h.signer);
    const counted: SubmitTransport = {
      send: (r) => (here++, inProcess.send(r)),
      receipt: (r) => (here++, inProcess.receipt(r)),
    };
    const transport = worker(() => counted);
    try {
      const { topicId, journal, submitter } = await setup(0, 'w-boot', transport, { window: 1 });
      const first = await submitter.submit({ key: 'w-boot-0', message: messageFor('w-boot-0') });
      expect(first.status).toBe('confirmed');
      expect(here).toBe(2); // its send and its receipt: the worker cannot have answered 'ready' yet
      let n = 1;
      const deadline = Date.now() + 30_000;
      for (; ; n++) {
        const before = here;
        const o = await submitter.submit({ key: `w-boot-${n}`, message: messageFor(`w-boot-${n}`) });
        expect(o.status).toBe('confirmed');
        if (here === before) break; // served by the worker
        expect(Date.now()).toBeLessThan(deadline);
      }
      await journal.close();
      expect(await readTopic(h.mirror, topicId, n + 1)).toHaveLength(n + 1);
    } finally {
      await transport.close();
    }
  });

  it('a worker that is gone stops submission with an error that says so', async () => {
    const transport = worker();
    const { journal, submitter } = await setup(2, 'w-dead', transport, { window: 1 });
    await transport.close();
    const outcome = await submitter.submit({ key: 'w-dead-0', message: messageFor('w-dead-0') });
    await journal.close();
    expect(outcome.status).toBe('unsent');
    expect(submitter.fatal?.code).toBe('SUBMIT_WORKER');
    expect(submitter.fatal?.message).toMatch(/submission worker stopped/);
    // Its id was journaled before the send was attempted: a resume sends it under that id.
    const { state } = await readJournal(journal.path);
    expect(state.signals.get('w-dead-0')?.txIds).toHaveLength(1);
  });

  it("reports the worker's own heap, and nothing once it has stopped", async () => {
    const transport = worker();
    const memory = await transport.memory();
    expect(memory).toBeDefined();
    expect(memory!.heapUsed).toBeGreaterThan(0);
    expect(memory!.heapTotal).toBeGreaterThanOrEqual(memory!.heapUsed);
    expect(memory!.newSpace).toBeGreaterThan(0);
    expect(memory!.newSpace).toBeLessThan(memory!.heapTotal);
    await transport.close();
    expect(await transport.memory()).toBeUndefined();
  });
});
