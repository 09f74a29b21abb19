/**
 * Entry of the packing worker thread (started by `packing.ts`): the run's packers and their flush timer. It never
 * touches the journal: the thread that started it journals each message it delivers before submitting it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SignalPacking, type PackWorkerReply, type PackWorkerRequest, type PackingOptions } from './packing.js';

const port = parentPort!;
// Copied, not transferred: a small Buffer may be a view of Node's shared allocation pool.
const packing = new SignalPacking(workerData as PackingOptions, (messages) => port.postMessage({ op: 'packed', messages } satisfies PackWorkerReply));

port.on('message', (request: PackWorkerRequest) => {
  if (request.op === 'add') {
    const { items } = request;
    for (let i = 0; i < items.length; i += 2) packing.add(items[i]!, items[i + 1]!);
  } else {
    packing.flush();
    port.postMessage({ op: 'flushed', id: request.id } satisfies PackWorkerReply);
  }
});
