/**
 * `watchRegistry` on the emulator (2 s mirror lag) with the sample agents: an agent registered while the watcher
 * runs has its signals on the topic within a deadline (polled, no speed assertion); an agent deleted from the
 * registry is dropped; the per-host limit holds (asks counted per host); a graceful stop ends with exit status
 * "stopped" and every journaled signal confirmed; a cycle that ends is revealed and the next one starts a new run.
 */
import { describe, expect, it } from 'vitest';
import { createHcs25Client } from '../../src/client.js';
import type { Agent } from '../../src/core/agent.js';
import { createTopic } from '../../src/hedera/tx.js';
import { listRuns, readJournal, journalPath, signalReceipt } from '../../src/publish/journal.js';
import { estimateSubmitFee } from '../../src/publish/fees.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import type { Transport } from '../../src/evaluate/transports/types.js';
import { loadWatchState, watchStatePath } from '../../src/watch/state.js';
import { until } from './helpers.js';
import { emulatorConfig, topicSignals } from '../publish/helpers.js';
import { useWatchEmulator } from './emulator.js';

const env = useWatchEmulator();

describe('hcs25 watch (action) on the emulator, 2 s mirror lag', () => {
  it('publishes the registry at start, then an agent registered while it runs, each signal once; a stop is graceful', async () => {
    const registry = await createTopic(env.h.client, { memo: 'hcs-2:0:86400' });
    const [first, ...later] = env.fleet.agents;
    await env.register(registry, first!);
    const topic = (await createSignalTopic(env.h.client)).topicId;
    const stateDir = `${env.dir}/e2e`;
    const w = env.startWatch(stateDir, registry, topic);
    // The agent listed before the watcher started is new to it (no cursor yet): asked at once.
    await until('the first agent on the topic', async () =>
      (await topicSignals(env.h.mirror, topic)).signals.length >= 3 ? true : undefined,
    );
    for (const record of later) await env.register(registry, record);
    const expected = env.fleet.agents.length * 3;
    const read = await until('every agent on the topic', async () => {
      const r = await topicSignals(env.h.mirror, topic);
      return r.signals.length >= expected ? r : undefined;
    });
    expect(w.status()?.agentsKnown).toBe(env.fleet.agents.length);
    w.stop.abort();
    const result = await w.done;
    expect(result.status.state).toBe('stopped');
    expect(result.runs).toHaveLength(1);
    expect(read.duplicates).toBe(0);
    expect([...read.occurrences.values()].every((n) => n === 1)).toBe(true);
    expect(new Set(read.signals.map((s) => s.message.run))).toEqual(new Set(result.runs));
    // The journal and the topic agree: every journaled signal confirmed, and nothing on the topic that is not journaled.
    const { state } = await readJournal(journalPath(stateDir, result.runs[0]!));
    const journaled = [...state.signals.values()].filter((s) => s.message);
    expect(journaled.every((s) => signalReceipt(state, s))).toBe(true);
    expect(new Set(read.signals.map((s) => `${s.message.signal}|${s.message.subject}`)).size).toBe(journaled.length);
    expect(result.status.counters.signalsPublished).toBe(expected);
  }, 120_000);

  it('holds the per-host limit: asks per host counted while agents wait', async () => {
    const registry = await createTopic(env.h.client, { memo: 'hcs-2:0:86400' });
    // Five agents on one host and one on another; fake transports count every ask and probe by host.
    const records = [0, 1, 2, 3, 4].map((i) => ({
      name: `same-${i}`,
      protocol: 'openai',
      endpoint: `http://same.invalid:${8000 + i}/v1`,
      model: 'm',
    }));
    records.push({ name: 'other', protocol: 'openai', endpoint: 'http://other.invalid:9000/v1', model: 'm' });
    for (const r of records) await env.register(registry, r);
    const topic = (await createSignalTopic(env.h.client)).topicId;
    const asks = new Map<string, number>();
    const count = (agent: Agent) =>
      asks.set(new URL(agent.endpoint!).hostname, (asks.get(new URL(agent.endpoint!).hostname) ?? 0) + 1);
    const transportFactory = (agent: Agent): Transport => ({
      protocol: agent.protocol,
      canAsk: true,
      ask: async () => {
        count(agent);
        return { ok: true, text: '42', latencyMs: 1, meta: {} };
      },
      probe: async () => {
        count(agent);
        return { reachable: true, latencyMs: 1 };
      },
    });
    // 6 asks per host per minute: two agents of three evals each, then the bucket is empty for the rest of the test.
    const w = env.startWatch(`${env.dir}/per-host`, registry, topic, { perHost: 6, runner: { transportFactory } });
    await until('the other host asked', () => ((asks.get('other.invalid') ?? 0) >= 3 ? true : undefined));
    await until('two agents of the busy host asked', () => ((asks.get('same.invalid') ?? 0) >= 6 ? true : undefined));
    // Let the watcher tick for a while: the busy host's bucket refills at 0.1 ask/s, too slow for another agent.
    await new Promise((r) => setTimeout(r, 4_000));
    const status = w.status()!;
    expect(asks.get('same.invalid')).toBe(6);
    expect(asks.get('other.invalid')).toBe(3);
    expect(status.queue).toBe(3);
    expect(status.counters.evaluations).toBe(3);
    w.stop.abort();
    await w.done;
  }, 120_000);

  it('publishes a cycle larger than one run as several runs, each agent asked once in the cycle', async () => {
    const registry = await createTopic(env.h.client, { memo: 'hcs-2:0:86400' });
    for (const r of env.fleet.agents) await env.register(registry, r);
    const topic = (await createSignalTopic(env.h.client)).topicId;
    const stateDir = `${env.dir}/rotate`;
    // Two agents' signals per run: the four agents take at least two runs of one cycle.
    const w = env.startWatch(stateDir, registry, topic, { maxRunSignals: 6 });
    const expected = env.fleet.agents.length * 3;
    const read = await until('every agent on the topic', async () => {
      const r = await topicSignals(env.h.mirror, topic);
      return r.signals.length >= expected ? r : undefined;
    });
    w.stop.abort();
    const result = await w.done;
    const runs = new Set(read.signals.map((s) => s.message.run));
    expect(runs.size).toBeGreaterThanOrEqual(2);
    expect(result.status.counters.cycles).toBe(1);
    // Each (signal, subject) once across the cycle's runs: no agent was asked again in a later run.
    expect(new Set(read.signals.map((s) => `${s.message.signal}|${s.message.subject}`)).size).toBe(expected);
    expect(read.signals).toHaveLength(expected);
    const first = await readJournal(journalPath(stateDir, result.runs[0]!));
    expect(first.state.reveals.get(topic)?.receipt).toBeDefined();
  }, 120_000);

  it('ends a cycle: its run is revealed and the next cycle publishes under a new run id', async () => {
    const registry = await createTopic(env.h.client, { memo: 'hcs-2:0:86400' });
    await env.register(registry, env.fleet.agents[0]!);
    const topic = (await createSignalTopic(env.h.client)).topicId;
    const stateDir = `${env.dir}/cycles`;
    const w = env.startWatch(stateDir, registry, topic, { everyMs: 8_000 });
    await until('two cycles', async () => ((await listRuns(stateDir)).length >= 2 ? true : undefined));
    const runs = await listRuns(stateDir);
    const first = await readJournal(journalPath(stateDir, runs[0]!));
    expect(first.state.end?.status).toBe('complete');
    expect(first.state.reveals.get(topic)?.receipt).toBeDefined();
    w.stop.abort();
    const result = await w.done;
    expect(result.runs.slice(0, 2)).toEqual(runs.slice(0, 2));
  }, 120_000);

  it('removes the journal of a run once it was revealed --keep-journals ago, never one of the cycle in progress', async () => {
    const registry = await createTopic(env.h.client, { memo: 'hcs-2:0:86400' });
    await env.register(registry, env.fleet.agents[0]!);
    const topic = (await createSignalTopic(env.h.client)).topicId;
    const stateDir = `${env.dir}/prune`;
    const w = env.startWatch(stateDir, registry, topic, { everyMs: 6_000, keepJournalsMs: 0 });
    // Each cycle's run is revealed when the cycle ends; with --keep-journals 0 its journal goes at once.
    const removed = await until('a journal removed', () =>
      w.notes.find((l) => /^removed the journal of run \w+/.test(l)),
    );
    const run = /run (\w+)/.exec(removed)![1]!;
    // Stopped once the next cycle's run is open: a stop between two cycles leaves no run in progress to check.
    await until('the next run open', async () =>
      (await listRuns(stateDir)).some((r) => r !== run) ? true : undefined,
    );
    w.stop.abort();
    const result = await w.done;
    expect(result.runs[0]).toBe(run);
    expect(await listRuns(stateDir)).not.toContain(run);
    // The run is on the topic for good, its reveal included; the run in progress at the stop still has its journal.
    const read = await topicSignals(env.h.mirror, topic);
    expect(read.signals.some((s) => s.message.run === run)).toBe(true);
    expect(await listRuns(stateDir)).toContain(result.runs.at(-1));
    const saved = await loadWatchState(watchStatePath(stateDir, registry, topic), registry, topic);
    expect((saved.revealed ?? []).map((r) => r.run)).not.toContain(run);
  }, 120_000);

  it('pauses at the daily fee cap: an agent whose worst case does not fit is not asked, and the status says why', async () => {
    const registry = await createTopic(env.h.client, { memo: 'hcs-2:0:86400' });
    for (const r of env.fleet.agents.slice(0, 2)) await env.register(registry, r);
    const topic = (await createSignalTopic(env.h.client)).topicId;
    const stateDir = `${env.dir}/cap`;
    const client = createHcs25Client(emulatorConfig(env.h, env.dir, { stateDir }));
    const { tinybar } = await estimateSubmitFee(client.network.ledger, client.mirror).finally(() => client.close());
    // One agent's worst case (3 messages) fits; after its pack is paid (1 message) a second agent's 3 do not: 1 + 3 > 3.5.
    const w = env.startWatch(stateDir, registry, topic, { maxFeePerDayHbar: (Number(tinybar) * 3.5) / 1e8 });
    await until('the fee cap reached', () => (w.status()?.state === 'paused-fee-cap' ? true : undefined));
    await until('the first agent on the topic', async () =>
      (await topicSignals(env.h.mirror, topic)).signals.length >= 3 ? true : undefined,
    );
    // Nothing else is asked while paused (a second agent would be asked and published within this wait).
    await new Promise((r) => setTimeout(r, 3_000));
    const status = w.status()!;
    expect(status.state).toBe('paused-fee-cap');
    expect(status.detail).toMatch(/daily fee cap reached; asking resumes at 00:00 UTC/);
    expect(status.counters.asks).toBe(3);
    expect((await topicSignals(env.h.mirror, topic)).signals).toHaveLength(3);
    w.stop.abort();
    await w.done;
  }, 120_000);
});
