/**
 * Submission in a worker thread. Building, signing and sending transactions and polling their receipts is most of
 * the CPU a published message costs; on the thread that also runs the evaluation, it delays the agents' answers
 * and so the whole schedule. The worker holds its own SDK client; the submitter stays on the calling thread with the
 * journal, so the order that makes a run exactly-once is unchanged: an id is journaled and synced there before its
 * send request is posted, and a receipt comes back as a message. A SIGKILL takes the worker with the process.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ownBytes } from '../core/bytes.js';
import type { NetworkConfig } from '../config/networks.js';
import type { OperatorConfig } from '../config/load.js';
import type { ClientTuning } from '../hedera/client.js';
import type { ReceiptRequest, ReceiptResult, SendRequest, SendResult, SubmitTransport } from './sdk-transport.js';

export interface WorkerData {
  network: NetworkConfig;
  /** The operator with its key as text: worker data is copied inside this process, never written anywhere. */
  operator: Omit<OperatorConfig, 'privateKey'> & { privateKey: string };
  tuning: ClientTuning;
}

type Request = { op: 'send'; request: SendRequest } | { op: 'receipt'; request: ReceiptRequest } | { op: 'memory'; collect?: boolean };
export type WorkerRequest = Request & { id: number };
export type WorkerReply = { id: number; result: SendResult | ReceiptResult | WorkerMemory } | 'ready';

/** The worker's own V8 heap, bytes (its isolate's `process.memoryUsage()`; RSS is the whole process's). */
export interface WorkerMemory {
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Committed size of its young generation (new space): the part of its heap that grows with its message rate. */
  newSpace: number;
}

const ENTRY = new URL('./submit-worker.js', import.meta.url);

/**
 * The worker's young generation, MB (V8 makes two semi-spaces of a third each: 8 MB of new space). Left to V8 it
 * grows to 48 MB (32 MB committed) once messages flow, whenever that happens: in a long-running watcher that was
 * 24 MB of RSS appearing mid-run. The worker's objects live one send or one receipt poll; measured with `npm run
 * bench -- watch`: its new space stays at 8 MB, its live heap (about 30 MB) is unchanged, CPU within the noise.
 */
export const WORKER_YOUNG_GENERATION_MB = 12;

/**
 * Whether the worker can start: the built JavaScript (dist/) has its entry; the TypeScript sources run under a test
 * runner's loader, which a worker thread does not get, so they submit in-process.
 */
export function canSubmitInWorker(): boolean {
  return ENTRY.protocol === 'file:' && existsSync(fileURLToPath(ENTRY));
}

export interface WorkerTransport extends SubmitTransport {
  /**
   * The worker's heap (benches, status), undefined once it has stopped. `collect`: a full GC first, so the figure
   * is what it holds (only when the process runs with `--expose-gc`, which workers inherit).
   */
  memory(options?: { collect?: boolean }): Promise<WorkerMemory | undefined>;
  close(): Promise<void>;
}

/**
 * `untilReady`: where requests go while the worker is still loading the SDK (a second or so): a small run is not
 * held up by it. Each request stands alone (a journaled id to send, a receipt to ask), so requests for one message
 * may be served by both.
 */
export function startWorkerTransport(options: { network: NetworkConfig; operator: OperatorConfig; tuning: ClientTuning; untilReady?: () => SubmitTransport }): WorkerTransport {
  const data: WorkerData = {
    network: options.network,
    operator: { accountId: options.operator.accountId, keyType: options.operator.keyType, privateKey: options.operator.privateKey.reveal() },
    tuning: options.tuning,
  };
  const worker = new Worker(ENTRY, { workerData: data, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } });
  // Only requests in flight keep the process alive.
  worker.unref();
  type Result = SendResult | ReceiptResult | WorkerMemory | undefined;
  const pending = new Map<number, { op: WorkerRequest['op']; resolve: (result: Result) => void }>();
  let nextId = 0;
  let dead: string | undefined;
  let ready = false;
  const failed = (op: WorkerRequest['op'], why: string): Result =>
    op === 'send'
      ? { ok: false, failure: { kind: 'fatal', status: 'WORKER', message: `the submission worker stopped: ${why}`, hint: 'resume the run: unsent signals are kept in the journal' } }
      : op === 'receipt'
        ? { ok: false, reason: `the submission worker stopped: ${why}` }
        : undefined;
  const die = (why: string) => {
    dead ??= why;
    for (const [id, p] of pending) {
      pending.delete(id);
      p.resolve(failed(p.op, why));
    }
  };
  worker.on('message', (reply: WorkerReply) => {
    if (reply === 'ready') {
      ready = true;
      return;
    }
    const p = pending.get(reply.id);
    if (!p) return;
    pending.delete(reply.id);
    if (pending.size === 0) worker.unref();
    p.resolve(reply.result);
  });
  worker.on('error', (err) => die(err.message));
  worker.on('exit', (code) => die(`exit code ${code}`));
  const post = (request: Request) =>
    new Promise<Result>((resolve) => {
      if (dead) return resolve(failed(request.op, dead));
      const id = nextId++;
      if (pending.size === 0) worker.ref();
      pending.set(id, { op: request.op, resolve });
      worker.postMessage({ ...request, id } satisfies WorkerRequest);
    });
  return {
    send: (request) =>
      !ready && !dead && options.untilReady
        ? options.untilReady().send(request)
        : // A message's bytes are cloned with the whole ArrayBuffer under them: only its own go across.
          (post({ op: 'send', request: typeof request.message === 'string' ? request : { ...request, message: ownBytes(request.message) } }) as Promise<SendResult>),
    receipt: (request) => (!ready && !dead && options.untilReady ? options.untilReady().receipt(request) : (post({ op: 'receipt', request }) as Promise<ReceiptResult>)),
    memory: (o) => post({ op: 'memory', ...(o?.collect && { collect: true }) }) as Promise<WorkerMemory | undefined>,
    async close() {
      dead ??= 'closed';
      await worker.terminate();
    },
  };
}
