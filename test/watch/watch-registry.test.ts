/**
 * `watchRegistry` on the emulator (2 s mirror lag) with the sample agents: an agent registered while the watcher
 * runs has its signals on the topic within a deadline (polled, no speed assertion); an agent deleted from the
 * registry is dropped; the per-host limit holds (asks counted per host); a graceful stop ends with exit status
 * "stopped" and every journaled signal confirmed; a cycle that ends is revealed and the next one starts a new run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watchRegistry, type WatchRegistryReturnType } from '../../src/watch/watch-registry.js';
import { createHcs25Client } from '../../src/client.js';
import type { Agent } from '../../src/core/agent.js';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/index.js';
import { createTopic, submitMessage } from '../../src/hedera/tx.js';
import { listRuns, readJournal, journalPath, signalReceipt } from '../../src/publish/journal.js';
import { estimateSubmitFee } from '../../src/publish/fees.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import type { Transport } from '../../src/evaluate/transports/types.js';
import type { WatchStatus } from '../../src/watch/status.js';
import { loadWatchState, saveWatchState, watchStatePath } from '../../src/watch/state.js';
import { readFile, writeFile } from 'node:fs/promises';
import { register as registerAgent, until } from './helpers.js';
import { emulatorConfig, startHarness, tempDir, topicSignals, type Harness } from '../publish/helpers.js';

let h: Harness;
let fleet: AgentFleet;
const tmp = tempDir();

beforeAll(async () => {
  h = await startHarness({ mirrorLagMs: 2_000 });
  fleet = await startAgentFleet({ include: ['perfect', 'wrong', 'a2a-calc', 'plain-http'] });
});

afterAll(async () => {
  await fleet.stop();
  await h.close();
  tmp.cleanup();
});

const register = (registry: string, record: object) => registerAgent(h.client, registry, record);

function startWatch(
  stateDir: string,
  registry: string,
  topic: string,
  extra: Partial<Parameters<typeof watchRegistry>[1]> = {},
) {
  const client = createHcs25Client(emulatorConfig(h, tmp.dir, { stateDir, budgetMs: 3_000, concurrency: 8 }));
  const stop = new AbortController();
  let status: (() => WatchStatus) | undefined;
  const notes: string[] = [];
  const done: Promise<WatchRegistryReturnType> = watchRegistry(client, {
    registry,
    topic,
    everyMs: 3_600_000,
    flushMs: 300,
    pollMs: 500,
    signal: stop.signal,
    onNote: (l) => notes.push(l),
    onReady: (s) => {
      status = s;
    },
    ...extra,
  }).finally(() => client.close());
  return { stop, done, notes, status: () => status?.() };
}

describe('hcs25 watch (action) on the emulator, 2 s mirror lag', () => {
  it('publishes the registry at start, then an agent registered while it runs, each signal once; a stop is graceful', async () => {
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    const [first, ...later] = fleet.agents;
    await register(registry, first!);
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/e2e`;
    const w = startWatch(stateDir, registry, topic);
    // The agent listed before the watcher started is new to it (no cursor yet): asked at once.
    await until('the first agent on the topic', async () =>
      (await topicSignals(h.mirror, topic)).signals.length >= 3 ? true : undefined,
    );
    for (const record of later) await register(registry, record);
    const expected = fleet.agents.length * 3;
    const read = await until('every agent on the topic', async () => {
      const r = await topicSignals(h.mirror, topic);
      return r.signals.length >= expected ? r : undefined;
    });
    expect(w.status()?.agentsKnown).toBe(fleet.agents.length);
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
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    // Five agents on one host and one on another; fake transports count every ask and probe by host.
    const records = [0, 1, 2, 3, 4].map((i) => ({
      name: `same-${i}`,
      protocol: 'openai',
      endpoint: `http://same.invalid:${8000 + i}/v1`,
      model: 'm',
    }));
    records.push({ name: 'other', protocol: 'openai', endpoint: 'http://other.invalid:9000/v1', model: 'm' });
    for (const r of records) await register(registry, r);
    const topic = (await createSignalTopic(h.client)).topicId;
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
    const w = startWatch(`${tmp.dir}/per-host`, registry, topic, { perHost: 6, runner: { transportFactory } });
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
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    for (const r of fleet.agents) await register(registry, r);
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/rotate`;
    // Two agents' signals per run: the four agents take at least two runs of one cycle.
    const w = startWatch(stateDir, registry, topic, { maxRunSignals: 6 });
    const expected = fleet.agents.length * 3;
    const read = await until('every agent on the topic', async () => {
      const r = await topicSignals(h.mirror, topic);
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
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    await register(registry, fleet.agents[0]!);
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/cycles`;
    const w = startWatch(stateDir, registry, topic, { everyMs: 8_000 });
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
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    await register(registry, fleet.agents[0]!);
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/prune`;
    const w = startWatch(stateDir, registry, topic, { everyMs: 6_000, keepJournalsMs: 0 });
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
    const read = await topicSignals(h.mirror, topic);
    expect(read.signals.some((s) => s.message.run === run)).toBe(true);
    expect(await listRuns(stateDir)).toContain(result.runs.at(-1));
    const saved = await loadWatchState(watchStatePath(stateDir, registry, topic), registry, topic);
    expect((saved.revealed ?? []).map((r) => r.run)).not.toContain(run);
  }, 120_000);
  it("a stop between a new run's journal and the save naming it: the next start removes that journal, nothing else", async () => {
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    await register(registry, fleet.agents[0]!);
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/opening`;
    const first = startWatch(stateDir, registry, topic);
    await until('the first agent on the topic', async () =>
      (await topicSignals(h.mirror, topic)).signals.length >= 3 ? true : undefined,
    );
    first.stop.abort();
    await first.done;
    const [run] = await listRuns(stateDir);
    // The state as such a stop leaves it: a run named as opening, its journal holding its start record only.
    const orphan = '01JZZZZZZZZZZZZZZZZZZZZZZZ';
    const startLine = (await readFile(journalPath(stateDir, run!), 'utf8')).split('\n')[0]!.replace(run!, orphan);
    await writeFile(journalPath(stateDir, orphan), `${startLine}\n`);
    const statePath = watchStatePath(stateDir, registry, topic);
    await saveWatchState(statePath, { ...(await loadWatchState(statePath, registry, topic)), opening: orphan });
    expect(await listRuns(stateDir)).toContain(orphan);

    const second = startWatch(stateDir, registry, topic);
    await until('the unused journal removed', () =>
      second.notes.some((n) => n.includes(`run ${orphan} was created but never used`)) ? true : undefined,
    );
    second.stop.abort();
    await second.done;
    expect(await listRuns(stateDir)).not.toContain(orphan);
    expect(await listRuns(stateDir)).toContain(run);
    expect((await loadWatchState(statePath, registry, topic)).opening).toBeUndefined();
    expect((await topicSignals(h.mirror, topic)).duplicates).toBe(0);
  }, 120_000);

  it('a run closed while an agent was half asked, then a stop: the restart asks what it lacks in that run and reveals it', async () => {
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    await register(registry, fleet.agents[0]!);
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/half`;
    const first = startWatch(stateDir, registry, topic);
    await until('the first agent on the topic', async () =>
      (await topicSignals(h.mirror, topic)).signals.length >= 3 ? true : undefined,
    );
    first.stop.abort();
    await first.done;
    const [run] = await listRuns(stateDir);
    // The journal a SIGKILL leaves when a run closes (full) while its last agent is asked: its probe journaled, the
    // rest not yet. Forged from the real run: its start record and probe result under a new run id.
    const half = '01JZZZZZZZZZZZZZZZZZZZZZZY';
    const lines = (await readFile(journalPath(stateDir, run!), 'utf8')).split('\n');
    const probe = lines.find((l) => l.includes('"t":"result"') && l.includes('"kind":"availability"'))!;
    await writeFile(
      journalPath(stateDir, half),
      `${lines[0]!.replaceAll(run!, half)}\n${probe.replaceAll(run!, half)}\n`,
    );
    const statePath = watchStatePath(stateDir, registry, topic);
    await saveWatchState(statePath, { ...(await loadWatchState(statePath, registry, topic)), unrevealed: [half] });

    const second = startWatch(stateDir, registry, topic);
    const { state } = await until('the half-asked run revealed', async () => {
      const r = await readJournal(journalPath(stateDir, half));
      return r.state.reveals.get(topic)?.receipt ? r : undefined;
    });
    second.stop.abort();
    await second.done;
    const subject = (JSON.parse(probe) as { result: { agent: { subject: string } } }).result.agent.subject;
    const read = await until("the run's signals on the topic", async () => {
      const r = await topicSignals(h.mirror, topic);
      return r.signals.filter((s) => s.message.run === half).length >= 3 ? r : undefined;
    });
    // The missing evals were asked in the run that lacked them, once; the journaled probe was published, not asked again.
    expect(read.signals.filter((s) => s.message.run === half).map((s) => s.message.subject)).toEqual([
      subject,
      subject,
      subject,
    ]);
    expect(second.notes.some((n) => n.includes(`finishing run ${half}: 1 agents to complete`))).toBe(true);
    expect(read.duplicates).toBe(0);
    expect([...state.signals.values()].filter((s) => s.message).every((s) => signalReceipt(state, s))).toBe(true);
  }, 120_000);

  it('saves a cursor past an agent only once its answers are on disk: a SIGKILL then leaves none behind the cursor unasked', async () => {
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    await register(registry, fleet.agents[0]!);
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/cursor`;
    // The publisher flushes the journal when it sends a pack: one agent's signals never fill one, and with the flush
    // timer at an hour its answers stay in memory unless saving the cursor flushes them.
    const w = startWatch(stateDir, registry, topic, { flushMs: 3_600_000 });
    const statePath = watchStatePath(stateDir, registry, topic);
    const saved = await until('a cursor past the agent', async () => {
      const st = await loadWatchState(statePath, registry, topic);
      return st.cursor && st.cursor.seq >= 1 && st.cycle?.run ? st : undefined;
    });
    // What a SIGKILL now would leave on disk: the agent the cursor passed has its answers in the journal.
    const { state } = await readJournal(journalPath(stateDir, saved.cycle!.run!));
    expect(state.results).toBe(3);
    w.stop.abort();
    expect((await w.done).status.state).toBe('stopped');
  }, 120_000);

  it('an agent updated after it was asked: the run is closed early and a new run of the same cycle asks it again, once', async () => {
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    const record = fleet.agents[0]!;
    const { seq } = await register(registry, record);
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/update`;
    const w = startWatch(stateDir, registry, topic, { minRunMs: 1_000 });
    const before = await until('the agent on the topic', async () => {
      const r = await topicSignals(h.mirror, topic);
      return r.signals.length >= 3 ? r : undefined;
    });
    // Same agent, new registration: an HCS-2 update of its entry, declaring the UAID it had (so the subject is kept).
    const uaid = before.signals[0]!.message.subject;
    const update = {
      p: 'hcs-2',
      op: 'update',
      uid: String(seq),
      metadata: JSON.stringify({ ...record, name: `${record.name} (v2)`, uaid }),
    };
    await submitMessage(h.client, registry, JSON.stringify(update), undefined);
    const read = await until('the agent asked again', async () => {
      const r = await topicSignals(h.mirror, topic);
      return r.signals.length >= 6 ? r : undefined;
    });
    w.stop.abort();
    const result = await w.done;
    expect(result.status.counters.cycles).toBe(1);
    const perRun = new Map<string, number>();
    for (const s of read.signals) perRun.set(s.message.run, (perRun.get(s.message.run) ?? 0) + 1);
    expect([...perRun.values()]).toEqual([3, 3]);
    expect(new Set(read.signals.map((s) => s.message.subject)).size).toBe(1);
    expect(read.duplicates).toBe(0);
    const first = await readJournal(journalPath(stateDir, result.runs[0]!));
    expect(first.state.reveals.get(topic)?.receipt).toBeDefined();
    expect((await loadWatchState(watchStatePath(stateDir, registry, topic), registry, topic)).reask ?? {}).toEqual({});
  }, 120_000);

  it('an agent updated while the watcher was down is asked again after the restart; an entry touched but unchanged is not', async () => {
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    const [record, other] = [fleet.agents[0]!, fleet.agents[1]!];
    const { seq } = await register(registry, record);
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/update-down`;
    const first = startWatch(stateDir, registry, topic, { minRunMs: 1_000 });
    const signalsOn = (n: number) =>
      until(`${n} signals on the topic`, async () => {
        const r = await topicSignals(h.mirror, topic);
        return r.signals.length >= n ? r : undefined;
      });
    const uaid = (await signalsOn(3)).signals[0]!.message.subject;
    const { seq: otherSeq } = await register(registry, other);
    const otherUaid = (await signalsOn(6)).signals.find((s) => s.message.subject !== uaid)!.message.subject;
    first.stop.abort();
    const [run] = (await first.done).runs;
    // While it is down: one agent really changes; the other's entry is rewritten as it was (asked alike: not again).
    const update = (uid: number, metadata: object) =>
      submitMessage(
        h.client,
        registry,
        JSON.stringify({ p: 'hcs-2', op: 'update', uid: String(uid), metadata: JSON.stringify(metadata) }),
        undefined,
      );
    await update(seq, { ...record, name: `${record.name} (v2)`, uaid });
    await update(otherSeq, { ...other, uaid: otherUaid });
    // Restarted once the mirror node shows both updates: they reach the watcher as changes made while it was down.
    await until('the updates on the mirror node', async () => {
      let n = 0;
      for await (const _ of h.mirror.topicMessages(registry)) n++;
      return n >= 4 ? true : undefined;
    });
    const second = startWatch(stateDir, registry, topic, { minRunMs: 1_000 });
    await signalsOn(9);
    await new Promise((r) => setTimeout(r, 3_000)); // time for a wrong second ask of the unchanged agent to show
    second.stop.abort();
    await second.done;
    const after = await topicSignals(h.mirror, topic);
    expect(after.signals).toHaveLength(9);
    expect(after.duplicates).toBe(0);
    const again = after.signals.filter((s) => s.message.run !== run);
    expect(again).toHaveLength(3);
    expect(new Set(again.map((s) => s.message.subject))).toEqual(new Set([uaid]));
    expect(after.signals.filter((s) => s.message.subject === otherUaid)).toHaveLength(3);
  }, 120_000);

  it('pauses at the daily fee cap: an agent whose worst case does not fit is not asked, and the status says why', async () => {
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    for (const r of fleet.agents.slice(0, 2)) await register(registry, r);
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/cap`;
    const client = createHcs25Client(emulatorConfig(h, tmp.dir, { stateDir }));
    const { tinybar } = await estimateSubmitFee(client.network.ledger, client.mirror).finally(() => client.close());
    // One agent's worst case (3 messages) fits; after its pack is paid (1 message) a second agent's 3 do not: 1 + 3 > 3.5.
    const w = startWatch(stateDir, registry, topic, { maxFeePerDayHbar: (Number(tinybar) * 3.5) / 1e8 });
    await until('the fee cap reached', () => (w.status()?.state === 'paused-fee-cap' ? true : undefined));
    await until('the first agent on the topic', async () =>
      (await topicSignals(h.mirror, topic)).signals.length >= 3 ? true : undefined,
    );
    // Nothing else is asked while paused (a second agent would be asked and published within this wait).
    await new Promise((r) => setTimeout(r, 3_000));
    const status = w.status()!;
    expect(status.state).toBe('paused-fee-cap');
    expect(status.detail).toMatch(/daily fee cap reached; asking resumes at 00:00 UTC/);
    expect(status.counters.asks).toBe(3);
    expect((await topicSignals(h.mirror, topic)).signals).toHaveLength(3);
    w.stop.abort();
    await w.done;
  }, 120_000);
});
