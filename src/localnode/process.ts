/**
 * The emulator in its own process, for benchmarks and demos that must measure or spare the caller's event loop:
 * the SDK's signing (JavaScript, on every transaction) and the emulator then run on different cores.
 * Needs the built JavaScript (dist/): it forks dist/localnode/process-entry.js.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Client } from '@hashgraph/sdk';
import { createClient } from './client.js';
import type { ErrorCode } from '../core/errors.js';
import { LocalNodeError } from './errors.js';
import type { GenesisAccount } from './genesis.js';
import type { NodeStats } from './hapi-server.js';
import type { ConsensusNodeFaults, ConsensusNodeInfo, LocalNode, LocalNodeFaults, LocalNodeOptions } from './types.js';

export type ChildRequest =
  | { type: 'usage'; id: number }
  /** `node` set: that consensus node's faults. */
  | { type: 'fault'; id: number; op: keyof LocalNodeFaults; args: unknown[]; node?: string }
  | { type: 'consensusNode'; id: number; op: 'stop' | 'start'; node: string }
  | { type: 'nodes'; id: number }
  | { type: 'stop' };
export type ChildReply =
  | {
      type: 'ready';
      ports: LocalNode['ports'];
      network: LocalNode['network'];
      mirrorRestUrl: string;
      operator: LocalNode['operator'];
      accounts: GenesisAccount[];
    }
  | { type: 'nodes'; id: number; nodes: ConsensusNodeInfo[] }
  | { type: 'error'; code: ErrorCode; message: string; hint?: string }
  | { type: 'usage'; id: number; cpu: NodeJS.CpuUsage; stats: NodeStats }
  | { type: 'done'; id: number }
  | { type: 'failed'; id: number; message: string };

type WithoutId<T> = T extends unknown ? Omit<T, 'id'> : never;
type Async<T> = { [K in keyof T]: T[K] extends (...args: infer A) => unknown ? (...args: A) => Promise<void> : never };

export interface LocalNodeProcess {
  pid: number;
  ports: LocalNode['ports'];
  network: LocalNode['network'];
  consensusNodes(): Promise<ConsensusNodeInfo[]>;
  nodeFaults(accountId: string): Async<ConsensusNodeFaults>;
  stopConsensusNode(accountId: string): Promise<void>;
  startConsensusNode(accountId: string): Promise<void>;
  mirrorRestUrl: string;
  operator: LocalNode['operator'];
  accounts: GenesisAccount[];
  /** The child's own CPU time (process.cpuUsage) and gRPC counters. */
  usage(): Promise<{ cpu: NodeJS.CpuUsage; stats: NodeStats }>;
  faults: Async<LocalNodeFaults>;
  client(operator?: { accountId: string; privateKey: string }): Client;
  stop(): Promise<void>;
}

export async function startLocalNodeProcess(options: LocalNodeOptions = {}): Promise<LocalNodeProcess> {
  const entry = fileURLToPath(new URL('./process-entry.js', import.meta.url));
  const child: ChildProcess = fork(entry, [JSON.stringify(options)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const sdk = await import('@hashgraph/sdk');
  const ready = await new Promise<Extract<ChildReply, { type: 'ready' }>>((resolve, reject) => {
    child.once('exit', (code) =>
      reject(
        new LocalNodeError('START_FAILED', `local node process exited with code ${code} before it was ready`, {
          hint: 'run `npm run build` first: the child runs dist/localnode/process-entry.js',
        }),
      ),
    );
    child.once('message', (m: ChildReply) => {
      if (m.type === 'ready') resolve(m);
      else if (m.type === 'error') reject(new LocalNodeError(m.code, m.message, m.hint ? { hint: m.hint } : {}));
    });
  });
  child.removeAllListeners('exit');
  let nextId = 1;
  const pending = new Map<number, { resolve: (m: ChildReply) => void; reject: (e: Error) => void }>();
  child.on('message', (m: ChildReply) => {
    if (!('id' in m)) return;
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.type === 'failed') p?.reject(new LocalNodeError('CHILD_FAILED', m.message));
    else p?.resolve(m);
  });
  child.on('exit', () => {
    for (const p of pending.values()) p.reject(new LocalNodeError('CHILD_EXITED', 'local node process exited'));
    pending.clear();
  });
  const request = (msg: WithoutId<Extract<ChildRequest, { id: number }>>): Promise<ChildReply> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      child.send({ ...msg, id });
    });
  const fault =
    <K extends keyof LocalNodeFaults>(op: K, node?: string) =>
    async (...args: unknown[]): Promise<void> => {
      await request({ type: 'fault', op, args, ...(node ? { node } : {}) });
    };
  let stopped: Promise<void> | undefined;
  return {
    pid: child.pid ?? -1,
    ports: ready.ports,
    network: ready.network,
    consensusNodes: async () => {
      const m = await request({ type: 'nodes' });
      if (m.type !== 'nodes') throw new LocalNodeError('CHILD_FAILED', 'unexpected reply to nodes');
      return m.nodes;
    },
    nodeFaults: (node) => ({
      injectPrecheck: fault('injectPrecheck', node),
      injectGrpcError: fault('injectGrpcError', node),
      dropConnections: fault('dropConnections', node),
      setLatency: fault('setLatency', node),
      clear: fault('clear', node),
    }),
    stopConsensusNode: async (node) => {
      await request({ type: 'consensusNode', op: 'stop', node });
    },
    startConsensusNode: async (node) => {
      await request({ type: 'consensusNode', op: 'start', node });
    },
    mirrorRestUrl: ready.mirrorRestUrl,
    operator: ready.operator,
    accounts: ready.accounts,
    usage: async () => {
      const m = await request({ type: 'usage' });
      if (m.type !== 'usage') throw new LocalNodeError('CHILD_FAILED', 'unexpected reply to usage');
      return { cpu: m.cpu, stats: m.stats };
    },
    faults: {
      injectPrecheck: fault('injectPrecheck'),
      injectGrpcError: fault('injectGrpcError'),
      dropConnections: fault('dropConnections'),
      setConsensusDelay: fault('setConsensusDelay'),
      setMirrorLag: fault('setMirrorLag'),
      setLatency: fault('setLatency'),
      clear: fault('clear'),
    },
    client: (op) =>
      createClient(
        sdk,
        { host: options.host ?? '127.0.0.1', network: ready.network, mirrorGrpc: ready.ports.mirrorGrpc },
        op ?? ready.operator,
      ),
    stop: () => {
      stopped ??= new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.send({ type: 'stop' } satisfies ChildRequest);
      });
      return stopped;
    },
  };
}
