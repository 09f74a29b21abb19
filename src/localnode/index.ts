/**
 * Embedded Hedera local-node emulator: consensus gRPC (50211), mirror gRPC (5600) and mirror REST (5551) that
 * the unmodified @hashgraph/sdk and the standards-sdk talk to over the real protocols.
 *
 *   const node = await startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 } });
 *   const client = node.client();            // operator 0.0.2
 *   ...
 *   client.close(); await node.stop();
 *
 * `nodes: n` runs n consensus nodes (accounts 0.0.3 … 0.0.(2+n)) on one shared ledger, each on its own port with
 * its own faults, each stoppable and restartable while the mirror keeps serving.
 *
 * See client.ts for the SDK's ~grpcDeadline exit delay after the last request.
 */
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nowNs } from './codec.js';
import { createClient, type SdkModule } from './client.js';
import { LOCAL_NODE_PORT_STEP, LOCAL_PORTS } from '../core/ports.js';
import type { ConsensusNodeFaults, LocalNode, LocalNodeOptions } from './types.js';
import { LocalNodeError } from './errors.js';
import { FaultPlan } from './faults.js';
import {
  DEFAULT_ACCOUNTS,
  FIRST_NODE_ACCOUNT,
  MAX_NODES,
  OPERATOR_ACCOUNT,
  OPERATOR_KEY_DER,
  applyGenesis,
  genesisAccounts,
  type GenesisAccount,
} from './genesis.js';
import { bindServer, dropConnections as drainPort, shutdown, type grpc } from './grpc.js';
import { createHapiServer, newStats } from './hapi-server.js';
import { Ledger } from './ledger.js';
import { TopicStreams, createMirrorGrpcServer } from './mirror-grpc.js';
import { createMirrorRestServer } from './mirror-rest.js';
import { Journal } from './persistence.js';
import { QueryEngine } from './queries.js';
import { LedgerState } from './state.js';

export { LocalNodeError } from './errors.js';
export { nextRunningHash, runningHashPreimage, RUNNING_HASH_VERSION } from './running-hash.js';
export type { NodeStats } from './hapi-server.js';
export { OPERATOR_KEY_DER } from './genesis.js';
export type { GenesisAccount } from './genesis.js';
export { startLocalNodeProcess, type LocalNodeProcess } from './process.js';
export type { ConsensusNodeFaults, ConsensusNodeInfo, LocalNode, LocalNodeFaults, LocalNodeOptions } from './types.js';

export const DEFAULT_PORTS = LOCAL_PORTS;

function checkMs(name: string, v: number | undefined): number {
  if (v === undefined) return 0;
  if (!Number.isFinite(v) || v < 0)
    throw new LocalNodeError('BAD_OPTION', `${name} must be a non-negative number of ms, got ${v}`, {
      hint: `set ${name} to 0 or more`,
    });
  return v;
}

function checkPort(name: string, v: number | undefined, fallback: number): number {
  const p = v ?? fallback;
  if (!Number.isInteger(p) || p < 0 || p > 65535)
    throw new LocalNodeError('BAD_OPTION', `${name} port must be 0..65535, got ${p}`, {
      hint: 'use 0 for any free port',
    });
  return p;
}

/** One port per consensus node. */
function consensusPorts(ports: number | number[] | undefined, nodes: number | undefined): number[] {
  if (Array.isArray(ports)) {
    if (nodes !== undefined && nodes !== ports.length) {
      throw new LocalNodeError('BAD_OPTION', `nodes is ${nodes} but ${ports.length} consensus ports were given`, {
        hint: 'give one port per node, or a single first port',
      });
    }
    if (ports.length === 0)
      throw new LocalNodeError('BAD_OPTION', 'the consensus port list is empty', { hint: 'give one port per node' });
  }
  const n = Array.isArray(ports) ? ports.length : (nodes ?? 1);
  if (!Number.isInteger(n) || n < 1 || n > MAX_NODES)
    throw new LocalNodeError('BAD_OPTION', `nodes must be 1..${MAX_NODES}, got ${n}`, {
      hint: 'testnet has about 7 consensus nodes',
    });
  const list = Array.isArray(ports)
    ? ports
    : Array.from({ length: n }, (_, i) => {
        const first = checkPort('consensus', ports, DEFAULT_PORTS.consensus);
        return first === 0 ? 0 : first + i * LOCAL_NODE_PORT_STEP;
      });
  const out = list.map((p, i) => checkPort(`consensus node ${i + 1}`, p, DEFAULT_PORTS.consensus));
  const fixed = out.filter((p) => p !== 0);
  if (new Set(fixed).size !== fixed.length)
    throw new LocalNodeError('BAD_OPTION', `consensus ports repeat: ${out.join(', ')}`, {
      hint: 'give each node its own port (0 = any free port)',
    });
  return out;
}

interface ConsensusNodeSlot {
  num: number;
  accountId: string;
  port: number;
  faults: FaultPlan;
  latencyMs?: number;
  queries: QueryEngine;
  server?: grpc.Server;
  /** A start or stop under way: they run one at a time per node. */
  busy: Promise<void>;
}

function listenHttp(server: HttpServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      reject(
        new LocalNodeError(
          err.code === 'EADDRINUSE' ? 'PORT_IN_USE' : 'BIND_FAILED',
          `mirror REST could not listen on ${host}:${port}: ${err.message}`,
          {
            hint:
              err.code === 'EADDRINUSE'
                ? `another local node holds port ${port}; stop it or choose other ports (0 = any free port)`
                : 'check the host and port options',
            cause: err,
          },
        ),
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

export async function startLocalNode(options: LocalNodeOptions = {}): Promise<LocalNode> {
  const host = options.host ?? '127.0.0.1';
  const wantedConsensus = consensusPorts(options.ports?.consensus, options.nodes);
  const wanted = {
    mirrorGrpc: checkPort('mirrorGrpc', options.ports?.mirrorGrpc, DEFAULT_PORTS.mirrorGrpc),
    mirrorRest: checkPort('mirrorRest', options.ports?.mirrorRest, DEFAULT_PORTS.mirrorRest),
  };
  let mirrorLagMs = checkMs('mirrorLagMs', options.mirrorLagMs);
  const consensusDelayMs = checkMs('consensusDelayMs', options.consensusDelayMs);
  const requestedAccounts = options.accounts ?? DEFAULT_ACCOUNTS;
  if (!Number.isInteger(requestedAccounts) || requestedAccounts < 0 || requestedAccounts > 1000) {
    throw new LocalNodeError('BAD_OPTION', `accounts must be 0..1000, got ${requestedAccounts}`, {
      hint: 'the default is 10 of each kind',
    });
  }
  // The SDK is only needed for client(); loading it alongside binding keeps start-up short.
  const sdkPromise: Promise<SdkModule> = import('@hashgraph/sdk');

  const state = new LedgerState();
  const journal = options.stateDir ? new Journal(options.stateDir, state) : undefined;
  const nodeCount = wantedConsensus.length;
  let funded: GenesisAccount[];
  if (journal?.exists()) {
    // Genesis as recorded in the journal wins over the `accounts` option; node accounts are the union of both.
    const n = journal.load((count, ns, nodes) =>
      applyGenesis(state, genesisAccounts(count), ns, Math.max(nodes, nodeCount)),
    );
    funded = genesisAccounts(n).map((a) => a.info);
  } else {
    const accounts = genesisAccounts(requestedAccounts);
    const ns = nowNs();
    applyGenesis(state, accounts, ns, nodeCount);
    journal?.writeGenesis(requestedAccounts, ns, nodeCount);
    funded = accounts.map((a) => a.info);
  }

  const ledger = new Ledger(state, { consensusDelayMs });
  const lag = { lagMs: () => mirrorLagMs };
  const streams = new TopicStreams(state, lag);
  if (journal) ledger.addListener(journal);
  ledger.addListener({
    onConsensus: (_record, changed) => {
      for (const t of new Set(changed.messages.map((m) => m.topic))) streams.notify(t);
    },
  });
  const faults = new FaultPlan();
  let latencyMs = 0;
  const stats = newStats();
  const slots: ConsensusNodeSlot[] = wantedConsensus.map((port, i) => {
    const num = FIRST_NODE_ACCOUNT + i;
    return {
      num,
      accountId: `0.0.${num}`,
      port,
      faults: new FaultPlan(),
      queries: new QueryEngine(ledger, num),
      busy: Promise.resolve(),
    };
  });
  const ports = { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 };
  const mirrorGrpc = createMirrorGrpcServer({
    streams,
    faults,
    consensusEndpoints: () => slots.map((n) => ({ accountNum: n.num, host, port: n.port })),
  });
  const rest = createMirrorRestServer({ state, lagMs: () => mirrorLagMs });

  const startSlot = async (slot: ConsensusNodeSlot): Promise<void> => {
    if (slot.server) return;
    const server = createHapiServer({
      ledger,
      queries: slot.queries,
      faults: [slot.faults, faults],
      stats,
      nodeAccount: slot.num,
      latencyMs: () => slot.latencyMs ?? latencyMs,
    });
    try {
      slot.port = await bindServer(server, host, slot.port, `consensus gRPC (node ${slot.accountId})`);
    } catch (err) {
      await shutdown(server);
      throw err;
    }
    slot.server = server;
  };
  const stopSlot = async (slot: ConsensusNodeSlot): Promise<void> => {
    const server = slot.server;
    slot.server = undefined;
    if (server) await shutdown(server);
  };

  try {
    for (const slot of slots) await startSlot(slot);
    ports.consensus = slots[0]!.port;
    ports.mirrorGrpc = await bindServer(mirrorGrpc, host, wanted.mirrorGrpc, 'mirror gRPC');
    ports.mirrorRest = await listenHttp(rest, host, wanted.mirrorRest);
  } catch (err) {
    await Promise.all([...slots.map(stopSlot), shutdown(mirrorGrpc)]);
    rest.close();
    ledger.stop();
    throw err;
  }
  const sdk = await sdkPromise;
  const network: Record<string, string> = Object.fromEntries(slots.map((n) => [`${host}:${n.port}`, n.accountId]));

  const slotOf = (accountId: string): ConsensusNodeSlot => {
    const slot = slots.find((n) => n.accountId === accountId);
    if (!slot) {
      throw new LocalNodeError('UNKNOWN_NODE', `there is no consensus node ${accountId}`, {
        hint: `the nodes are ${slots.map((n) => n.accountId).join(', ')}`,
      });
    }
    return slot;
  };
  const nodeFaults = (slot: ConsensusNodeSlot): ConsensusNodeFaults => ({
    injectPrecheck: (method, status, count) => slot.faults.injectPrecheck(method, status, count),
    injectGrpcError: (method, code, count) => slot.faults.injectGrpcError(method, code, count),
    dropConnections: () => {
      if (slot.server) drainPort(slot.server, host, slot.port);
    },
    setLatency: (ms) => {
      slot.latencyMs = checkMs('latency', ms);
    },
    clear: () => {
      slot.faults.clear();
      slot.latencyMs = undefined;
    },
  });
  const serialized = (slot: ConsensusNodeSlot, op: (slot: ConsensusNodeSlot) => Promise<void>): Promise<void> => {
    const next = slot.busy.then(() => op(slot));
    slot.busy = next.catch(() => undefined);
    return next;
  };

  const operator = { accountId: `0.0.${OPERATOR_ACCOUNT}`, privateKey: OPERATOR_KEY_DER };
  let stopped: Promise<void> | undefined;
  const node: LocalNode = {
    ports,
    network,
    mirrorRestUrl: `http://${host}:${ports.mirrorRest}`,
    operator,
    accounts: funded,
    consensusNodes: () =>
      slots.map((n) => ({ accountId: n.accountId, host, port: n.port, running: n.server !== undefined })),
    nodeFaults: (accountId) => nodeFaults(slotOf(accountId)),
    stopConsensusNode: (accountId) => serialized(slotOf(accountId), stopSlot),
    startConsensusNode: (accountId) => {
      const slot = slotOf(accountId);
      if (stopped)
        return Promise.reject(
          new LocalNodeError('STOPPED', 'the local node has been stopped', { hint: 'start a new local node' }),
        );
      return serialized(slot, startSlot);
    },
    faults: {
      injectPrecheck: (method, status, count) => faults.injectPrecheck(method, status, count),
      injectGrpcError: (method, code, count) => faults.injectGrpcError(method, code, count),
      dropConnections: () => {
        for (const slot of slots) nodeFaults(slot).dropConnections();
        drainPort(mirrorGrpc, host, ports.mirrorGrpc);
        streams.closeAll();
        rest.closeAllConnections();
      },
      setConsensusDelay: (ms) => {
        ledger.setConsensusDelay(checkMs('consensusDelayMs', ms));
      },
      setMirrorLag: (ms) => {
        mirrorLagMs = checkMs('mirrorLagMs', ms);
      },
      setLatency: (ms) => {
        latencyMs = checkMs('latency', ms);
      },
      clear: () => {
        faults.clear();
        latencyMs = 0;
        for (const slot of slots) nodeFaults(slot).clear();
        ledger.setConsensusDelay(consensusDelayMs);
        mirrorLagMs = checkMs('mirrorLagMs', options.mirrorLagMs);
      },
    },
    client: (op) => createClient(sdk, { host, network, mirrorGrpc: ports.mirrorGrpc }, op ?? operator),
    stats: () => ({ ...stats, calls: { ...stats.calls } }),
    stop: () => {
      stopped ??= (async () => {
        ledger.flushPending();
        ledger.stop();
        streams.closeAll();
        journal?.flush();
        rest.closeAllConnections();
        await Promise.all([
          ...slots.map((slot) => serialized(slot, stopSlot)),
          shutdown(mirrorGrpc),
          new Promise<void>((resolve) => rest.close(() => resolve())),
        ]);
      })();
      return stopped;
    },
  };
  if (!options.quiet) {
    const consensus = slots.map((n) => `${host}:${n.port}${slots.length > 1 ? ` (${n.accountId})` : ''}`).join(', ');
    process.stderr.write(
      `local node: consensus ${consensus}, mirror gRPC ${host}:${ports.mirrorGrpc}, mirror REST ${node.mirrorRestUrl}\n`,
    );
  }
  return node;
}
