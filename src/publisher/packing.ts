/**
 * Packing a run's journaled signals into messages, off the evaluation's thread when it can. Serialising and deflating
 * packs (and the size search that deflates each pack several times) was the largest CPU cost left on the thread that
 * starts the agents' asks, and a busy thread starts them late. So the packers run in a worker thread when the built
 * JavaScript is there (tests of the TypeScript sources pack in-process, exactly the same way).
 *
 * The worker decides only where a message ends and what its bytes are. Every exactly-once decision stays with the
 * caller: it journals each delivered message (its bytes and its signals' keys) before the message's transaction id
 * is used. Signals handed over and not yet delivered in a message are journaled results in no pack, which a resume
 * packs anew, so a crash in between loses and repeats nothing.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { packData, type PackRecord } from './journal.js';
import { SignalPacker, type PackMode } from '../signals/pack.js';
import { signalKey, type SignalMessageV2 } from '../signals/schema-v2.js';

/** One message out of the packers: what the journal's pack record holds, and the bytes to submit. */
export interface PackedOut {
  encoding: PackRecord['encoding'];
  /** As {@link packData} writes it for the journal. */
  data: string;
  bytes: Uint8Array;
  /** Journal keys of its signals, in index order. */
  keys: string[];
}

export interface PackingOptions {
  mode: PackMode;
  /** A partly filled message is delivered when no signal has completed it for this long, ms. */
  flushMs: number;
  /** In `subject` mode, a subject's message is complete once it holds this many signals (the run's evals). */
  perSubject: number;
}

/**
 * The packers of one run: one, or in `subject` mode one per subject whose signals are still coming (results arrive
 * interleaved), with the flush timer. Synchronous; `emit` gets each batch of finished messages.
 */
export class SignalPacking {
  private readonly packers = new Map<string, SignalPacker>();
  /** When each packer's open message got its first signal: the flush timer delivers it `flushMs` later. */
  private readonly opened = new Map<string, number>();
  /** Journal key of each signal in a packer, by its packer key. */
  private readonly packing = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: PackingOptions,
    private readonly emit: (messages: PackedOut[]) => void,
  ) {}

  /** `json`: the signal's message as journaled (its length is the packer's size estimate). */
  add(key: string, json: string): void {
    const signal = JSON.parse(json) as SignalMessageV2;
    this.packing.set(signalKey(signal), key);
    const { mode } = this.options;
    const id = mode === 'subject' ? signal.subject : '';
    let packer = this.packers.get(id);
    if (!packer) this.packers.set(id, (packer = new SignalPacker({ mode })));
    const full = packer.add(signal, json.length);
    this.deliver(full);
    if (packer.pending === 0 || (mode === 'subject' && packer.pending >= this.options.perSubject)) this.close(id);
    else if (full.length > 0 || !this.opened.has(id)) this.opened.set(id, Date.now());
    this.schedule();
  }

  /** Delivers every open message. */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    for (const id of [...this.packers.keys()]) this.close(id);
  }

  /** Stops the flush timer; what is open stays undelivered (journaled, packed anew on resume). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private deliver(messages: ReturnType<SignalPacker['flush']>): void {
    if (messages.length === 0) return;
    this.emit(
      messages.map((m) => {
        const keys = m.keys.map((k) => this.packing.get(k)!);
        for (const k of m.keys) this.packing.delete(k);
        return { encoding: m.encoding, data: packData(m.encoding, m.bytes), bytes: m.bytes, keys };
      }),
    );
  }

  private close(id: string): void {
    this.deliver(this.packers.get(id)!.flush());
    this.packers.delete(id);
    this.opened.delete(id);
  }

  private schedule(): void {
    if (this.timer || this.opened.size === 0) return;
    let oldest = Number.POSITIVE_INFINITY;
    for (const at of this.opened.values()) oldest = Math.min(oldest, at);
    this.timer = setTimeout(() => this.onTimer(), Math.max(0, oldest + this.options.flushMs - Date.now()));
  }

  private onTimer(): void {
    this.timer = undefined;
    const now = Date.now();
    for (const [id, at] of this.opened) if (now - at >= this.options.flushMs) this.close(id);
    this.schedule();
  }
}

/** The packers of a run as the publisher drives them, in this thread or in a worker. */
export interface Packing {
  /** Hands over a journaled signal (its journal key and message JSON). */
  add(key: string, json: string): void;
  /** Delivers every open message; resolves once all of them have reached `onPacked`. */
  flush(): Promise<void>;
  /** Resolves when fewer than `limit` handed-over signals wait for their message (or the packing failed). */
  whenBelow(limit: number): Promise<void>;
  /** Stops packing; signals not yet delivered stay journaled results in no pack. */
  close(): Promise<void>;
}

export interface StartPackingOptions extends PackingOptions {
  onPacked: (messages: PackedOut[]) => void;
  /** The worker died: nothing more will be delivered. */
  onError: (error: Error) => void;
  /** Tests: pack in this thread even when the worker could run. */
  inProcess?: boolean;
}

export type PackWorkerRequest = { op: 'add'; items: string[] } | { op: 'flush'; id: number };
export type PackWorkerReply = { op: 'packed'; messages: PackedOut[] } | { op: 'flushed'; id: number };

const ENTRY = new URL('./pack-worker.js', import.meta.url);

/** Whether the worker can start: only the built JavaScript has its entry (a worker thread gets no TypeScript loader). */
export function canPackInWorker(): boolean {
  return ENTRY.protocol === 'file:' && existsSync(fileURLToPath(ENTRY));
}

export function startPacking(options: StartPackingOptions): Packing {
  const { onPacked, onError, inProcess, ...packing } = options;
  let pending = 0;
  let failed = false;
  let waiters: (() => void)[] = [];
  const wake = () => {
    const w = waiters;
    waiters = [];
    for (const resolve of w) resolve();
  };
  const delivered = (messages: PackedOut[]) => {
    for (const m of messages) pending -= m.keys.length;
    onPacked(messages);
    wake();
  };
  const whenBelow = async (limit: number) => {
    while (pending >= limit && !failed) await new Promise<void>((resolve) => waiters.push(resolve));
  };

  if (inProcess || !canPackInWorker()) {
    const here = new SignalPacking(packing, delivered);
    return {
      add(key, json) {
        pending++;
        here.add(key, json);
      },
      flush: async () => here.flush(),
      whenBelow,
      close: async () => here.stop(),
    };
  }

  // What it holds is bounded by the publisher's back-pressure (a few thousand signals): a small heap keeps the
  // run's RSS down, and a limit hit stops the run (resumable) instead of growing without bound.
  const worker = new Worker(ENTRY, { workerData: packing, resourceLimits: { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 4 } });
  worker.unref();
  /** Signals handed over in this turn of the event loop: posted together, one message per turn. */
  let batch: string[] = [];
  let posting: NodeJS.Immediate | undefined;
  let nextFlush = 0;
  const flushes = new Map<number, () => void>();
  let dead: Error | undefined;
  const post = () => {
    posting = undefined;
    if (batch.length === 0 || dead) return;
    worker.postMessage({ op: 'add', items: batch } satisfies PackWorkerRequest);
    batch = [];
  };
  const die = (error: Error) => {
    if (dead) return;
    dead = error;
    failed = true;
    onError(error);
    wake();
    for (const resolve of flushes.values()) resolve();
    flushes.clear();
  };
  worker.on('message', (reply: PackWorkerReply) => {
    if (reply.op === 'packed') delivered(reply.messages);
    else {
      flushes.get(reply.id)?.();
      flushes.delete(reply.id);
      if (flushes.size === 0 && pending === 0) worker.unref();
    }
  });
  worker.on('error', (err) => die(new Error(`the packing worker stopped: ${err.message}`)));
  worker.on('exit', (code) => die(new Error(`the packing worker stopped: exit code ${code}`)));
  return {
    add(key, json) {
      if (dead) return;
      if (pending++ === 0) worker.ref();
      batch.push(key, json);
      posting ??= setImmediate(post);
    },
    flush() {
      if (dead) return Promise.resolve();
      clearImmediate(posting);
      post();
      const id = nextFlush++;
      worker.ref();
      return new Promise<void>((resolve) => {
        flushes.set(id, resolve);
        worker.postMessage({ op: 'flush', id } satisfies PackWorkerRequest);
      });
    },
    whenBelow,
    async close() {
      clearImmediate(posting);
      if (dead) return;
      dead = new Error('closed');
      await worker.terminate();
    },
  };
}
