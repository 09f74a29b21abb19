/**
 * Entry of the submission worker thread (started by `worker-transport.ts`): an SDK client of its own, and the SDK
 * transport serving the submitter's requests. It never touches the journal: every id it is given is durable already.
 */
import { getHeapSpaceStatistics } from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { Secret } from '../config/secret.js';
import { createClient, parsePrivateKey } from '../hedera/client.js';
import { sdkTransport } from './sdk-transport.js';
import { operatorSigner } from './signer.js';
import type { WorkerData, WorkerMemory, WorkerReply, WorkerRequest } from './worker-transport.js';

// No stack traces in this thread: every SDK request leaves a gRPC deadline timer that, when it fires after the answer,
// still makes an error with a formatted stack (the SDK appends the cause's stack to it), and gRPC ends each call with
// another. Stacks never leave this thread (failures go back as plain data), and making them was a visible share of
// its CPU at registry scale.
Error.stackTraceLimit = 0;

const data = workerData as WorkerData;
const operator = { ...data.operator, privateKey: new Secret(data.operator.privateKey) };
const client = createClient({ network: data.network, operator }, data.tuning);
const transport = sdkTransport(client, operatorSigner(parsePrivateKey(operator)));
const port = parentPort!;

port.on('message', (request: WorkerRequest | 'close') => {
  if (request === 'close') {
    client.close();
    port.close();
    return;
  }
  const reply = (result: Exclude<WorkerReply, 'ready'>['result']) => port.postMessage({ id: request.id, result } satisfies WorkerReply);
  if (request.op === 'send') void transport.send(request.request).then(reply);
  else if (request.op === 'receipt') void transport.receipt(request.request).then(reply);
  else reply(workerMemory(request.collect === true));
});
port.postMessage('ready' satisfies WorkerReply);

function workerMemory(collect: boolean): WorkerMemory {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (collect && gc) gc();
  const { heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
  const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
  return { heapUsed, heapTotal, external, arrayBuffers, newSpace };
}
