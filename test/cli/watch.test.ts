/**
 * `hcs25 watch` as a process, on the emulator with 2 s mirror lag and the sample agents: SIGKILL while it publishes,
 * an agent registered while it is down, restart — every (run, signal, subject) on the topic exactly once and equal to
 * what the journal holds; `/metrics` parses as Prometheus text and `/healthz` is JSON; SIGTERM stops it gracefully
 * (exit 0, receipts awaited: nothing left unconfirmed in the journal).
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/index.js';
import { createTopic } from '../../src/hedera/tx.js';
import { journalPath, listRuns, readJournal, signalReceipt } from '../../src/publish/journal.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { spawnCli, startHarness, tempDir, topicSignals, type Harness } from '../publish/helpers.js';
import { parseExposition } from '../watch/prometheus.js';
import { register as registerAgent, until } from '../watch/helpers.js';

let h: Harness;
let fleet: AgentFleet;
const tmp = tempDir();

beforeAll(async () => {
  h = await startHarness({ mirrorLagMs: 2_000 });
  fleet = await startAgentFleet({ include: ['perfect', 'verbose', 'wrong', 'a2a-calc', 'plain-http'] });
});

afterAll(async () => {
  await fleet.stop();
  await h.close();
  tmp.cleanup();
});

const register = (registry: string, record: object) => registerAgent(h.client, registry, record);

type Watcher = ReturnType<typeof spawnCli>;

/** Waits for `expected` signals on the topic; on a timeout, what both watchers said is the only account of why. */
async function everySignal(topic: string, expected: number, first: Watcher, second: Watcher) {
  return until('every signal on the topic', async () => {
    const r = await topicSignals(h.mirror, topic);
    return r.signals.length >= expected ? r : undefined;
  }).catch(async (err: Error) => {
    second.child.kill('SIGKILL');
    const [killed, restarted] = await Promise.all([first.done, second.done]);
    throw new Error(
      `${err.message}\n--- first watcher ---\n${killed.stdout}${killed.stderr}\n--- restarted watcher ---\n${restarted.stdout}${restarted.stderr}`,
    );
  });
}

describe('hcs25 watch (process)', () => {
  it('SIGKILL + restart loses and repeats nothing; /metrics and /healthz; SIGTERM is graceful', async () => {
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    const [late, ...early] = fleet.agents;
    for (const r of early) await register(registry, r);
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/state`;
    const args = [
      'watch',
      '--registry',
      registry,
      '--topic',
      topic,
      '--state-dir',
      stateDir,
      '--poll-ms',
      '500',
      '--budget-ms',
      '3000',
      '--status-every',
      '1s',
    ];

    const first = spawnCli(h, tmp.dir, args);
    // Killed as soon as a pack is journaled: its transaction may or may not have been sent.
    const run = await until('a cycle', async () => (await listRuns(stateDir))[0]);
    await until('a journaled pack', () => {
      try {
        return readFileSync(journalPath(stateDir, run), 'utf8').includes('"t":"pack"') ? true : undefined;
      } catch {
        return undefined;
      }
    });
    first.child.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.signal).toBe('SIGKILL');
    // Registered while the watcher is down: after the saved cursor, so it is new to the restarted watcher.
    await register(registry, late!);

    const second = spawnCli(h, tmp.dir, [...args, '--status-port', '0']);
    let stderr = '';
    second.child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const port = await until('the status port', () => /status: http:\/\/127\.0\.0\.1:(\d+)\/healthz/.exec(stderr)?.[1]);
    const expected = fleet.agents.length * 3;
    const read = await everySignal(topic, expected, first, second);

    const metrics = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const exposition = parseExposition(await metrics.text());
    expect(exposition.samples.find((s) => s.name === 'hcs25_watch_agents_known')?.value).toBe(fleet.agents.length);
    const health = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as {
      state: string;
      run: string;
      agentsKnown: number;
    };
    expect(health).toMatchObject({ state: 'running', run, agentsKnown: fleet.agents.length });

    second.child.kill('SIGTERM');
    const stopped = await second.done;
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(stopped.stderr).toMatch(/stopped — \d+ evaluations/);

    // One run (the restart resumed the cycle); on the topic each (run, signal, subject) once, exactly the journal's.
    expect(await listRuns(stateDir)).toEqual([run]);
    expect(read.duplicates).toBe(0);
    expect([...read.occurrences.values()].every((n) => n === 1)).toBe(true);
    const { state } = await readJournal(journalPath(stateDir, run));
    const journaled = [...state.signals.values()].filter((s) => s.message);
    expect(journaled.every((s) => signalReceipt(state, s))).toBe(true);
    const onTopic = new Set(read.signals.map((s) => `${s.message.run}|${s.message.signal}|${s.message.subject}`));
    expect(onTopic.size).toBe(expected);
    expect(journaled).toHaveLength(expected);
    const after = await topicSignals(h.mirror, topic);
    expect(after.signals).toHaveLength(expected);
    expect(after.duplicates).toBe(0);
  }, 180_000);

  it('SIGKILL while a full run drains in the background: the restart finishes and reveals it, nothing repeated', async () => {
    const registry = await createTopic(h.client, { memo: 'hcs-2:0:86400' });
    for (const r of fleet.agents) await register(registry, r);
    const topic = (await createSignalTopic(h.client)).topicId;
    const stateDir = `${tmp.dir}/rotate`;
    // Two agents per run: the first run is full at once and drains (receipts, read-back, reveal) while the second asks.
    const args = [
      'watch',
      '--registry',
      registry,
      '--topic',
      topic,
      '--state-dir',
      stateDir,
      '--poll-ms',
      '500',
      '--budget-ms',
      '3000',
      '--max-run-signals',
      '6',
    ];
    const first = spawnCli(h, tmp.dir, args);
    await until('a second run', async () => ((await listRuns(stateDir)).length >= 2 ? true : undefined));
    first.child.kill('SIGKILL');
    await first.done;

    const second = spawnCli(h, tmp.dir, args);
    const expected = fleet.agents.length * 3;
    const read = await everySignal(topic, expected, first, second);
    // Every run closed before the last one is finished and revealed (the run killed while draining included).
    await until(
      'the closed runs revealed',
      async () => {
        const runs = await listRuns(stateDir);
        const states = await Promise.all(
          runs.slice(0, -1).map(async (run) => (await readJournal(journalPath(stateDir, run))).state),
        );
        return states.length >= 1 && states.every((st) => st.reveals.get(topic)?.receipt) ? true : undefined;
        // Each closed run drains and is revealed in turn: a generous deadline for a loaded machine (not a speed check).
      },
      150_000,
    );
    second.child.kill('SIGTERM');
    const stopped = await second.done;
    expect(stopped.code, stopped.stderr).toBe(0);
    expect(read.duplicates).toBe(0);
    expect([...read.occurrences.values()].every((n) => n === 1)).toBe(true);
    // No agent asked in two runs of the cycle.
    expect(new Set(read.signals.map((s) => `${s.message.signal}|${s.message.subject}`)).size).toBe(expected);
    for (const run of await listRuns(stateDir)) {
      const { state } = await readJournal(journalPath(stateDir, run));
      expect([...state.signals.values()].filter((s) => s.message).every((s) => signalReceipt(state, s))).toBe(true);
    }
  }, 300_000);
});
