/**
 * `hcs25 serve --workers N`: N server processes on one port (node:cluster: the primary accepts connections and hands
 * them to the workers in turn; Node 20 has no SO_REUSEPORT option, and cluster works on every platform). Each worker
 * is a whole `startServer` instance on the same PostgreSQL database: the advisory lock makes one of them the indexer,
 * the others answer, and each keeps its score cache current from the database's change revisions. The embedded
 * engine (PGlite) belongs to one process, so workers need PostgreSQL.
 *
 * The primary runs no server and opens no database: it starts the workers (the same command line, marked as a
 * worker), waits until each listens, restarts one that dies, and stops them all on close.
 */
import type { Worker } from 'node:cluster';
import { Hcs25Error } from '../core/errors.js';

/** Set in a worker's environment: the command runs one server and reports to the primary instead of printing. */
export const SERVE_WORKER_ENV = 'HCS25_SERVE_WORKER';

/** What a worker tells the primary once it listens. */
export interface ServeWorkerReady {
  type: 'hcs25-serve-ready';
  url: string;
  engine: 'pglite' | 'postgres';
  indexing: boolean;
}

export interface StartServerWorkersParameters {
  /** Worker processes, ≥ 1. */
  workers: number;
  /** Restarts and early exits, one line each. */
  onNote?: (line: string) => void;
}

export interface StartServerWorkersReturnType {
  url: string;
  engine: 'pglite' | 'postgres';
  /** Worker process ids, in start order (a restarted worker's new id replaces the old one). */
  pids(): number[];
  /** Stops every worker (SIGTERM: each closes its server, indexer and store) and waits for them. */
  close(): Promise<void>;
}

/** A worker that does not stop within this after SIGTERM is killed. */
const STOP_GRACE_MS = 15_000;

export function isServeWorker(): boolean {
  return process.env[SERVE_WORKER_ENV] === '1' && typeof process.send === 'function';
}

/** In a worker: tells the primary this server listens. */
export function reportServeWorkerReady(ready: Omit<ServeWorkerReady, 'type'>): void {
  process.send?.({ type: 'hcs25-serve-ready', ...ready } satisfies ServeWorkerReady);
}

/** Resolves when the primary is gone (the worker then stops as on SIGTERM). */
export function serveWorkerOrphaned(): Promise<void> {
  return new Promise((resolve) => process.once('disconnect', () => resolve()));
}

export async function startServerWorkers(
  parameters: StartServerWorkersParameters,
): Promise<StartServerWorkersReturnType> {
  const cluster = (await import('node:cluster')).default;
  const note = parameters.onNote ?? (() => {});
  const workers = new Set<Worker>();
  let stopping = false;

  const fork = (): Promise<ServeWorkerReady> => {
    const worker = cluster.fork({ [SERVE_WORKER_ENV]: '1' });
    workers.add(worker);
    return new Promise((resolve, reject) => {
      let ready = false;
      worker.on('message', (message: ServeWorkerReady) => {
        if (message?.type !== 'hcs25-serve-ready' || ready) return;
        ready = true;
        resolve(message);
      });
      worker.once('exit', (code, signal) => {
        workers.delete(worker);
        const how = signal ? `signal ${signal}` : `code ${code}`;
        if (!ready) {
          reject(
            new Hcs25Error('CHILD_EXITED', `serve worker ${worker.process.pid} exited (${how}) before it listened`, {
              hint: 'its error is printed above',
            }),
          );
          return;
        }
        if (stopping) return;
        note(`serve: worker ${worker.process.pid} exited (${how}); starting another`);
        fork().catch((err: unknown) => note(`serve: ${err instanceof Error ? err.message : String(err)}`));
      });
    });
  };

  const stopAll = async () => {
    stopping = true;
    await Promise.all(
      [...workers].map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            const kill = setTimeout(() => worker.process.kill('SIGKILL'), STOP_GRACE_MS);
            worker.once('exit', () => {
              clearTimeout(kill);
              resolve();
            });
            worker.process.kill('SIGTERM');
          }),
      ),
    );
  };

  const started = await Promise.allSettled(Array.from({ length: Math.max(1, parameters.workers) }, () => fork()));
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  const first = (started[0] as PromiseFulfilledResult<ServeWorkerReady>).value;
  return {
    url: first.url,
    engine: first.engine,
    pids: () => [...workers].map((w) => w.process.pid!),
    close: stopAll,
  };
}
