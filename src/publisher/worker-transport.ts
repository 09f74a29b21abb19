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

export type WorkerRequest = { id: number; op: 'send'; request: SendRequest } | { id: number; op: 'receipt'; request: ReceiptRequest };
export type WorkerReply = { id: number; result: SendResult | ReceiptResult } | 'ready';

const ENTRY = new URL('./submit-worker.js', import.meta.url);

/**
 * Whether the worker can start: the built JavaScript (dist/) has its entry; the TypeScript sources run under a test
 * runner's loader, which a worker thread does not get, so they submit in-process.
 */
export function canSubmitInWorker(): boolean {
  return ENTRY.protocol === 'file:' && existsSync(fileURLToPath(ENTRY));
}

export interface WorkerTransport extends SubmitTransport {
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
  const worker = new Worker(ENTRY, { workerData: data });
  // Only requests in flight keep the process alive.
  worker.unref();
  const pending = new Map<number, { op: WorkerRequest['op']; resolve: (result: SendResult | ReceiptResult) => void }>();
  let nextId = 0;
  let dead: string | undefined;
  let ready = false;
  const failed = (op: WorkerRequest['op'], why: string): SendResult | ReceiptResult =>
    op === 'send'
      ? { ok: false, failure: { kind: 'fatal', status: 'WORKER', message: `the submission worker stopped: ${why}`, hint: 'resume the run: unsent signals are kept in the journal' } }
      : { ok: false, reason: `the submission worker stopped: ${why}` };
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
  const call = (op: WorkerRequest['op'], request: SendRequest | ReceiptRequest) => {
    if (!ready && !dead && options.untilReady) return op === 'send' ? options.untilReady().send(request as SendRequest) : options.untilReady().receipt(request as ReceiptRequest);
    return new Promise<SendResult | ReceiptResult>((resolve) => {
      if (dead) return resolve(failed(op, dead));
      const id = nextId++;
      if (pending.size === 0) worker.ref();
      pending.set(id, { op, resolve });
      worker.postMessage({ id, op, request } as WorkerRequest);
    });
  };
  return {
    send: (request) => call('send', request) as Promise<SendResult>,
    receipt: (request) => call('receipt', request) as Promise<ReceiptResult>,
    async close() {
      dead ??= 'closed';
      await worker.terminate();
    },
  };
}
