/**
 * The setting of the watch action's end-to-end files: an emulator with a 2 s mirror lag, the sample agents, a temp
 * folder, and `startWatch`, which runs `watchRegistry` on them until its `stop` is aborted.
 */
import { afterAll, beforeAll } from 'vitest';
import { watchRegistry, type WatchRegistryReturnType } from '../../src/watch/watch-registry.js';
import { createHcs25Client } from '../../src/client.js';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/index.js';
import type { WatchStatus } from '../../src/watch/status.js';
import { register as registerAgent } from './helpers.js';
import { emulatorConfig, startHarness, tempDir, type Harness } from '../publish/helpers.js';

export interface WatchEmulator {
  h: Harness;
  fleet: AgentFleet;
  dir: string;
  register(registry: string, record: object): ReturnType<typeof registerAgent>;
  startWatch(
    stateDir: string,
    registry: string,
    topic: string,
    extra?: Partial<Parameters<typeof watchRegistry>[1]>,
  ): {
    stop: AbortController;
    done: Promise<WatchRegistryReturnType>;
    notes: string[];
    status: () => WatchStatus | undefined;
  };
}

/** Starts the setting before the file's tests and stops it after them; its fields are set once `beforeAll` ran. */
export function useWatchEmulator(): WatchEmulator {
  const tmp = tempDir();
  const env = { dir: tmp.dir } as WatchEmulator;
  beforeAll(async () => {
    env.h = await startHarness({ mirrorLagMs: 2_000 });
    env.fleet = await startAgentFleet({ include: ['perfect', 'wrong', 'a2a-calc', 'plain-http'] });
  });
  afterAll(async () => {
    await env.fleet?.stop();
    await env.h?.close();
    tmp.cleanup();
  });
  env.register = (registry, record) => registerAgent(env.h.client, registry, record);
  env.startWatch = (stateDir, registry, topic, extra = {}) => {
    const client = createHcs25Client(emulatorConfig(env.h, tmp.dir, { stateDir, budgetMs: 3_000, concurrency: 8 }));
    const stop = new AbortController();
    let status: (() => WatchStatus) | undefined;
    const notes: string[] = [];
    const done = watchRegistry(client, {
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
  };
  return env;
}
