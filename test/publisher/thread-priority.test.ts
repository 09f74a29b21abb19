/**
 * The publisher's submission worker thread (the built `dist/`, as a worker thread runs JavaScript) lowers its own
 * scheduling priority, and only its own: the thread that asks the agents, and this process, keep theirs.
 * Linux only (a thread's nice value is its own there); elsewhere `lowerThreadPriority` does nothing and says so.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKER_NICE_STEPS } from '../../src/publisher/thread-priority.js';
import type { startWorkerTransport as StartWorkerTransport } from '../../src/publisher/worker-transport.js';
import { startHarness, type Harness } from './helpers.js';

const linux = process.platform === 'linux';
const dist = (path: string) => new URL(`../../dist/publisher/${path}`, import.meta.url).href;

/** Nice value of each thread of this process, by thread id (Linux /proc). */
function threadNice(): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      // Field 19 of stat is the nice value; the command name before it may hold spaces, so count after its ')'.
      out.set(Number(tid), Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** This process's main thread's nice value (0 unless the tests run under `nice`). */
const mainNice = () => threadNice().get(process.pid)!;

/** Threads that appeared since `before` at the workers' priority, below the main thread's. */
const newNiced = (before: Map<number, number>) => [...threadNice()].filter(([tid, nice]) => !before.has(tid) && nice === Math.min(19, before.get(process.pid)! + WORKER_NICE_STEPS));

describe.runIf(linux)('worker thread priority (Linux)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('lowerThreadPriority changes the calling worker thread alone', async () => {
    const before = threadNice();
    // Listening keeps the worker alive until it is terminated: a worker with nothing left to do ends by itself.
    const code = `const { parentPort } = require('node:worker_threads'); parentPort.on('message', () => {});
      import(${JSON.stringify(dist('thread-priority.js'))}).then((m) => parentPort.postMessage(m.lowerThreadPriority()));`;
    const worker = new Worker(code, { eval: true });
    const lowered = await new Promise((resolve) => worker.once('message', resolve));
    expect(lowered).toBe(true);
    expect(newNiced(before)).toHaveLength(1);
    expect(mainNice()).toBe(before.get(process.pid));
    expect(getPriority(process.pid)).toBe(before.get(process.pid));
    await worker.terminate();
  });

  it('the submission worker runs below the main thread', async () => {
    const { startWorkerTransport } = (await import(dist('worker-transport.js'))) as { startWorkerTransport: typeof StartWorkerTransport };
    const before = threadNice();
    const transport = startWorkerTransport({ network: h.config.network, operator: h.config.operator!, tuning: {} });
    // Answered by the worker itself (no in-process fallback here): it is running, and lowered its priority first.
    expect(await transport.memory()).toBeDefined();
    expect(newNiced(before).length).toBeGreaterThanOrEqual(1);
    expect(mainNice()).toBe(before.get(process.pid));
    await transport.close();
  });
});
