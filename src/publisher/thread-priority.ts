/**
 * The publisher's submission worker thread runs at a lower scheduling priority than the thread that asks
 * the agents. That thread's timers start each ask and end each budget, so every millisecond it waits for a core is
 * a millisecond added to the evaluation's schedule; the workers' work has slack, bounded by the publisher's
 * back-pressure. With about all the cores busy (190,000 agents on two cores: `npm run bench -- registry-scale`, where
 * the evaluation is at the edge of 1.05× its ideal schedule), the kernel otherwise shares them equally among the three
 * threads. When there are cores to spare a nice value changes nothing: the workers still run at once. Threads a
 * lowered thread starts inherit its value; the process's shared ones are not the workers': V8's helpers start with
 * the process, and libuv's pool with the first file operation, which is the run's or the score publication's journal,
 * opened on the main thread before either worker starts.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * How much lower, in nice steps: the kernel gives a thread 5 steps down about a third of the CPU time of the other
 * while both want a core (weights 335 and 1024), enough for the workers to keep up, never starved.
 */
export const WORKER_NICE_STEPS = 5;

/** Lowest priority there is (nice 19). */
const MAX_NICE = 19;

/**
 * Lowers the calling thread's priority by `steps` nice steps (from the thread's own, which a worker thread inherits
 * from the thread that started it) and returns whether it could. Linux only: there a thread has a nice value of its
 * own, and `setpriority` on its thread id (`/proc/thread-self`) changes that thread alone; elsewhere it would change
 * the whole process, so nothing is done. Lowering a priority needs no privilege.
 */
export function lowerThreadPriority(steps = WORKER_NICE_STEPS): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return false;
    setPriority(tid, Math.min(MAX_NICE, getPriority(tid) + steps));
    return true;
  } catch {
    // No /proc (a sandbox), or a policy that refuses it: the thread keeps its priority.
    return false;
  }
}
