/**
 * `watchRegistry` over an HCS-10 registry with a sample HCS-10 agent on the emulator: asking it is paid (the
 * connection request, the questions, the close, and their records on the runner's outbound topic), so the daily fee
 * cap counts those transactions as well as the signal messages, reserves their worst case before asking, and keeps
 * what they paid in the watch state for a restart the same day.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchRegistry, type WatchRegistryReturnType } from '../../src/watch/watch-registry.js';
import { createHcs25Client } from '../../src/client.js';
import { startHcs10Fleet, type Hcs10Fleet } from '../../src/devtools/hcs10-agents.js';
import { estimateSubmitFee } from '../../src/publish/fees.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import type { WatchStatus } from '../../src/watch/status.js';
import { loadWatchState, watchStatePath } from '../../src/watch/state.js';
import { until } from './helpers.js';
import { emulatorConfig, startHarness, tempDir, topicSignals, type Harness } from '../publish/helpers.js';

let h: Harness;
let fleet: Hcs10Fleet;
let estimate: bigint;
const tmp = tempDir();

beforeAll(async () => {
  h = await startHarness({ mirrorLagMs: 300 });
  fleet = await startHcs10Fleet({ node: h.node, include: ['correct'], pollMs: 100 });
  const client = createHcs25Client(emulatorConfig(h, tmp.dir, {}));
  estimate = (await estimateSubmitFee(client.network.ledger, client.mirror).finally(() => client.close())).tinybar;
}, 60_000);

afterAll(async () => {
  await fleet.stop();
  await h.close();
  tmp.cleanup();
});

function startWatch(stateDir: string, topic: string, maxFeePerDayHbar: number) {
  const client = createHcs25Client(emulatorConfig(h, tmp.dir, { stateDir, budgetMs: 30_000 }));
  const stop = new AbortController();
  let status: (() => WatchStatus) | undefined;
  const done: Promise<WatchRegistryReturnType> = watchRegistry(client, {
    registry: fleet.registryTopicId,
    topic,
    everyMs: 3_600_000,
    flushMs: 300,
    pollMs: 300,
    maxFeePerDayHbar,
    signal: stop.signal,
    onReady: (s) => {
      status = s;
    },
  }).finally(() => client.close());
  return { stop, done, status: () => status?.() };
}

describe('hcs25 watch: the daily fee cap counts HCS-10 asks', () => {
  it('charges every transaction of an HCS-10 ask to the day, and keeps the sum for a restart', async () => {
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/charged`;
    const w = startWatch(stateDir, topic, 20);
    await until(
      'the HCS-10 agent on the topic',
      async () => ((await topicSignals(h.mirror, topic)).signals.length >= 3 ? true : undefined),
      90_000,
    );
    w.stop.abort();
    const { status } = await w.done;
    const spent = BigInt(status.feesTodayTinybar);
    const messages = BigInt(status.counters.messagesPublished);
    expect(messages).toBeGreaterThan(0n);
    // At least the connection request, two questions and the close, each at the message price, besides the signals.
    const asks = spent - messages * estimate;
    expect(asks % estimate).toBe(0n);
    expect(asks / estimate).toBeGreaterThanOrEqual(4n);
    const saved = await loadWatchState(
      watchStatePath(stateDir, fleet.registryTopicId, topic),
      fleet.registryTopicId,
      topic,
    );
    expect(saved.askFees?.tinybar).toBe(asks.toString());
  }, 120_000);

  it('does not ask an HCS-10 agent when its signals fit under the cap but the worst case of asking it does not', async () => {
    const topic = (await createSignalTopic(h.client)).topicId;
    // Three signal messages fit; the ask's worst case (2 questions × 3 + 2 transactions) on top does not.
    const w = startWatch(`${tmp.dir}/tight`, topic, (Number(estimate) * 3.5) / 1e8);
    await until('the fee cap reached', () => (w.status()?.state === 'paused-fee-cap' ? true : undefined), 60_000);
    const status = w.status()!;
    expect(status.counters.asks).toBe(0);
    expect(fleet.running[0]!.stats.requests).toBe(1); // the first test's connection only
    w.stop.abort();
    await w.done;
  }, 120_000);
});
