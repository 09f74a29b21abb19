/**
 * The publisher while consensus nodes go away: on a network of three, the node a run submits to stops for good
 * mid-run; on a single-node network, the node restarts mid-submission. Every signal lands exactly once, read back
 * from the mirror node, and the run never stops.
 */
import { Metadata } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { TRANSACTION_MEMOS } from '../../src/format/protocol.js';
import { readJournal } from '../../src/publish/journal.js';
import { classifySend } from '../../src/publish/send-failure.js';
import { Submitter, type SubmitEvent, type SubmitterOptions } from '../../src/publish/submitter.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { countBy, journalWith, messageFor, readTopic, startHarness, tempDir, type Harness } from './helpers.js';

let h: Harness | undefined;
const tmp = tempDir();
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function run(
  harness: Harness,
  n: number,
  prefix: string,
  onEvent: (e: SubmitEvent, submitter: Submitter) => void,
  extra: Partial<SubmitterOptions> = {},
) {
  const { topicId } = await createSignalTopic(harness.client);
  const keys = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const journal = await journalWith(tmp.dir, keys, topicId);
  const submitter: Submitter = new Submitter({
    client: harness.client,
    signer: harness.signer,
    operatorId: harness.node.operator.accountId,
    topicId,
    journal,
    memo: TRANSACTION_MEMOS.signal,
    mirror: harness.mirror,
    window: 8,
    minBackoffMs: 100,
    maxBackoffMs: 1_000,
    // Short enough that a receipt asked only of a dead node fails the run within the test.
    receiptTimeoutMs: 5_000,
    retryBudgetMs: 20_000,
    onEvent: (e) => onEvent(e, submitter),
    ...extra,
  });
  const outcomes = await Promise.all(keys.map((key) => submitter.submit({ key, message: messageFor(key) })));
  await journal.close();
  return { topicId, keys, journal, submitter, outcomes };
}

async function expectExactlyOnce(harness: Harness, topicId: string, keys: string[]): Promise<void> {
  const messages = await readTopic(harness.mirror, topicId, keys.length);
  const counts = countBy(messages, (m) => m.message.toString('utf8'));
  for (const key of keys) expect(counts.get(messageFor(key)), key).toBe(1);
  expect(messages).toHaveLength(keys.length);
}

describe('publisher failover', () => {
  /** 40 signals through three nodes; the node that accepted the 10th goes down for good, with receipts of it pending. */
  async function submittingNodeStops(harness: Harness): Promise<void> {
    // Answers take a while, so calls are in flight (transactions accepted, answers not yet back) when the node stops.
    harness.node.faults.setLatency(100);
    let stopping: Promise<void> | undefined;
    const sentVia = new Map<string, number>();
    const { topicId, keys, journal, submitter, outcomes } = await run(harness, 40, 'fo', (e) => {
      if (e.type !== 'sent') return;
      sentVia.set(e.nodeId, (sentVia.get(e.nodeId) ?? 0) + 1);
      if (!stopping && [...sentVia.values()].reduce((a, b) => a + b, 0) === 10)
        stopping = harness.node.stopConsensusNode(e.nodeId);
    });
    await stopping;
    expect(harness.node.consensusNodes().filter((n) => !n.running)).toHaveLength(1);
    expect(submitter.fatal).toBeUndefined();
    expect(outcomes.filter((o) => o.status !== 'confirmed')).toEqual([]);
    await expectExactlyOnce(harness, topicId, keys);
    // Ids stayed as journaled: one id per signal, the confirmed one.
    const { state } = await readJournal(journal.path);
    for (const key of keys) {
      const s = state.signals.get(key)!;
      expect(s.txIds.map((t) => t.txId)).toEqual([s.receipt!.txId]);
    }
    expect(sentVia.size).toBeGreaterThan(1);
    expect(submitter.stats.retries).toBeGreaterThan(0);
  }

  it('three nodes, the submitting node stops mid-run: receipts come from the others, every signal lands once', async () => {
    // Consensus delay keeps receipts pending at the moment the node goes away.
    h = await startHarness({ nodes: 3, consensusDelayMs: 300 });
    await submittingNodeStops(h);
  });

  it('the same on the standard local-node ports (50211, 51211, 52211), where the SDK is in its local-node retry mode', async () => {
    // Like test/localnode/standard-ports.test.ts: fails with PORT_IN_USE while another local node holds these ports.
    h = await startHarness({ nodes: 3, consensusDelayMs: 300, ports: {} });
    expect(Object.keys(h.config.network.nodes)).toEqual(['127.0.0.1:50211', '127.0.0.1:51211', '127.0.0.1:52211']);
    await submittingNodeStops(h);
  });

  it('a single node restarts mid-submission: the run waits for it and goes on', async () => {
    h = await startHarness({ consensusDelayMs: 200 });
    const harness = h;
    // Answers take a while, so the restart catches calls in flight whose transactions the node already accepted.
    harness.node.faults.setLatency(300);
    let restart: Promise<void> | undefined;
    let sent = 0;
    const { topicId, keys, submitter, outcomes } = await run(harness, 30, 'rs', (e) => {
      if (e.type !== 'sent' || ++sent !== 3) return;
      restart = (async () => {
        await harness.node.stopConsensusNode('0.0.3');
        await new Promise((r) => setTimeout(r, 1_500));
        await harness.node.startConsensusNode('0.0.3');
      })();
    });
    await restart;
    expect(submitter.fatal).toBeUndefined();
    expect(outcomes.filter((o) => o.status !== 'confirmed')).toEqual([]);
    expect(submitter.stats.retries).toBeGreaterThan(0);
    await expectExactlyOnce(harness, topicId, keys);
  });
});

describe('classifySend on gRPC errors the SDK passes through', () => {
  // The SDK rethrows codes it does not retry itself as grpc-js's own error object, not as GrpcServiceError.
  const raw = (code: number, details: string): Error =>
    Object.assign(new Error(`${code} ${details}`), { code, details, metadata: new Metadata() });

  it('counts CANCELLED, UNAVAILABLE and INTERNAL from a node going down as transient', () => {
    for (const code of [1, 13, 14])
      expect(classifySend(raw(code, 'Call cancelled')).kind, String(code)).toBe('transient');
  });

  it("stops on a gRPC code that is the request's fault, and on anything unknown", () => {
    const invalid = classifySend(raw(3, 'bad request'));
    expect(invalid.kind === 'fatal' && invalid.error.status).toBe('GRPC');
    const unknown = classifySend(Object.assign(new Error('boom'), { code: 1 }));
    expect(unknown.kind === 'fatal' && unknown.error.status).toBe('UNEXPECTED');
  });
});
