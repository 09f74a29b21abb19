/**
 * Registry scale: what a run holds stays bounded by what is in flight (counted in entries, not timed), a run whose
 * fee forecast passes the cap never starts, and agents whose probe fails are asked nothing more — their evals are
 * published as not measured.
 */
import { existsSync, readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSignal, type BuiltSignal } from '../../src/publish/build-signals.js';
import { publishSignals } from '../../src/publish/publish-signals.js';
import { createHcs25Client } from '../../src/client.js';
import type { Agent } from '../../src/core/agent.js';
import { Hcs25Error } from '../../src/core/errors.js';
import { estimateSubmitFee } from '../../src/publish/fees.js';
import { Journal, emptyRunState, readJournal } from '../../src/publish/journal.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { encodeRunKey, newRunKey } from '../../src/format/hashing.js';
import type { Transport } from '../../src/evaluate/transports/types.js';
import { ulid } from 'ulid';
import {
  fakeAgents,
  fakeTransport,
  newLog,
  ok,
  rightAnswer,
  type FakeTransportLog,
} from '../evaluate/runner-helpers.js';
import { fleetResults } from '../format/fleet.js';
import { emulatorConfig, runWith, startHarness, tempDir, topicSignals, type Harness } from './helpers.js';

let h: Harness;
const tmp = tempDir();

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
  tmp.cleanup();
});

/** Agents whose index is divisible by 3 refuse the connection; the others answer right. */
function transports(log: FakeTransportLog): (agent: Agent) => Transport {
  return (agent) => {
    const dead = Number(agent.name.split('-')[1]) % 3 === 0;
    return fakeTransport(log, (p) => ok(rightAnswer(p)), {
      probe: () =>
        dead
          ? { reachable: false, latencyMs: 2, reason: 'connection refused' }
          : { reachable: true, latencyMs: 1, httpStatus: 200 },
    });
  };
}

describe('publishing holds what is in flight, not the run', () => {
  /** Publishes n built signals one message each (`--pack none`) through a window of 4; returns the most signals (or packs) held at once. */
  async function held(
    n: number,
  ): Promise<{ maxHeld: number; state: ReturnType<typeof emptyRunState>; outcomes: number }> {
    const client = createHcs25Client(emulatorConfig(h, tmp.dir, { stateDir: `${tmp.dir}/held-${n}` }));
    try {
      const run = ulid();
      const runKey = newRunKey();
      const topic = (await createSignalTopic(h.client)).topicId;
      const results = Array.from({ length: Math.ceil(n / 3) }, (_, i) => fleetResults(i))
        .flat()
        .slice(0, n);
      const agents = [...new Map(results.map((r) => [r.agent.subject, r.agent])).values()];
      const start = {
        run,
        seed: 'held',
        runKey: encodeRunKey(runKey),
        topic,
        agents,
        config: {
          network: 'local',
          evals: ['availability', 'math', 'science'],
          concurrency: 4,
          budgetMs: 1500,
          maxFeeHbar: 50,
          keepResponses: false,
          pack: 'none' as const,
          format: 3 as const,
        },
      };
      const journal = await Journal.create(`${tmp.dir}/held-${n}`, start);
      const state = emptyRunState({ t: 'start', v: 1, at: new Date().toISOString(), ...start });
      let maxHeld = 0;
      async function* signals(): AsyncGenerator<BuiltSignal> {
        for (const r of results) {
          maxHeld = Math.max(maxHeld, state.signals.size, state.packs.size);
          yield buildSignal(r, { run, runKey });
        }
      }
      const estimate = await estimateSubmitFee('local', client.mirror);
      const published = await publishSignals(client, {
        journal,
        state,
        signals: signals(),
        estimateTinybar: estimate.tinybar,
        stop: new AbortController(),
        submitter: { window: 4 },
      });
      expect(published.status).toBe('complete');
      expect(state.settled.published).toBe(n);
      expect(state.settled.messages.count).toBe(n);
      return { maxHeld, state, outcomes: published.outcomes.size };
    } finally {
      await client.close();
    }
  }

  it('keeps at most the submitter backlog of unconfirmed signals, however many the run publishes', {
    timeout: 120_000,
  }, async () => {
    const small = await held(30);
    const large = await held(150);
    // Window 4, backlog 2 × 4 messages of one signal each, plus the one being pulled.
    for (const r of [small, large]) {
      expect(r.maxHeld).toBeGreaterThan(0);
      expect(r.maxHeld).toBeLessThanOrEqual(9);
      // Confirmed signals and messages were settled into counts and let go.
      expect(r.state.signals.size).toBe(0);
      expect(r.state.packs.size).toBe(0);
      expect(r.outcomes).toBe(0);
      expect(r.state.settled.list.length).toBeLessThanOrEqual(1_000);
    }
    expect(large.state.results).toBe(150);
    // The journal has every result: a resume reads it back as done.
    const resumed = await readJournal(
      readdirSync(`${tmp.dir}/held-150/runs`)
        .filter((f) => f.endsWith('.jsonl'))
        .map((f) => `${tmp.dir}/held-150/runs/${f}`)[0]!,
      { keep: 'pending' },
    );
    expect(resumed.state.results).toBe(150);
    expect(resumed.state.signals.size).toBe(0);
    expect(resumed.state.settled.published).toBe(150);
  });
});

describe('the fee forecast', () => {
  it('is printed before a run starts; a run whose forecast passes the cap never starts and names the flag', async () => {
    const log = newLog();
    const notes: string[] = [];
    const stateDir = `${tmp.dir}/refused`;
    const topic = (await createSignalTopic(h.client)).topicId;
    const run = runWith(emulatorConfig(h, tmp.dir, { stateDir, maxFeeHbar: 0.001 }), {
      source: { agents: fakeAgents(200) },
      topic,
      runner: { transportFactory: transports(log) },
      onNote: (line) => notes.push(line),
    });
    const error = await run.then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(Hcs25Error);
    expect((error as Hcs25Error).code).toBe('FEE_CAP');
    expect((error as Hcs25Error).hint).toMatch(/--max-fee-hbar \d+ \(the forecast \+ 25%\)/);
    expect(notes.find((n) => n.startsWith('fee forecast:'))).toMatch(
      /200 agents × 3 evals → about 120 messages \(json, 5 signals per message\)/,
    );
    // Nothing was asked, nothing journaled.
    expect(log.probes + log.asks).toBe(0);
    expect(existsSync(`${stateDir}/runs`) ? readdirSync(`${stateDir}/runs`) : []).toEqual([]);
  });
});

describe('dead agents', () => {
  it('are asked nothing after a failed probe; their evals are on the topic as not measured (missing, probe-unreachable)', {
    timeout: 60_000,
  }, async () => {
    const log = newLog();
    const agents = fakeAgents(9);
    const topic = (await createSignalTopic(h.client)).topicId;
    const report = await runWith(emulatorConfig(h, tmp.dir, { stateDir: `${tmp.dir}/dead` }), {
      source: { agents },
      topic,
      seed: 'dead',
      runner: { transportFactory: transports(log) },
    });
    expect(report.status).toBe('complete');
    // 3 of 9 agents are dead: 9 probes, 2 asks for each of the 6 live ones.
    expect(log.probes).toBe(9);
    expect(log.asks).toBe(12);
    expect(report.evals).toMatchObject({ total: 27, skipped: 6, notAsked: 6 });
    expect(report.signals.published).toBe(27);

    const read = await topicSignals(h.mirror, topic, 27);
    expect(read.signals).toHaveLength(27);
    const notMeasured = read.signals
      .map((s) => s.message)
      .filter((m) => (m.data as { reason?: string }).reason === 'probe-unreachable');
    expect(notMeasured).toHaveLength(6);
    for (const m of notMeasured) {
      expect(m.status).toBe('missing');
      expect(m.data).toMatchObject({ outcome: 'skipped', score: 0 });
      expect(m.data).not.toHaveProperty('questionHash');
      expect(Number(/fake-(\d+)/.exec(m.subject)![1]) % 3).toBe(0);
    }
  });

  it('show in a dry run too, without asking them', async () => {
    const log = newLog();
    const previews: string[] = [];
    const report = await runWith(emulatorConfig(h, tmp.dir, { stateDir: `${tmp.dir}/dry` }), {
      source: { agents: fakeAgents(6) },
      dryRun: true,
      runner: { transportFactory: transports(log) },
      onDryRunMessage: (m) => previews.push(m.preview),
    });
    expect(report.status).toBe('dry-run');
    expect(log.asks).toBe(8);
    expect(report.evals.notAsked).toBe(4);
    expect(previews.join('\n').match(/probe-unreachable/g)).toHaveLength(4);
  });
});
