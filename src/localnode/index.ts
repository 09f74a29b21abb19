/**
 * Embedded Hedera local-node emulator: consensus gRPC (50211), mirror gRPC (5600) and mirror REST (5551) that
 * the unmodified @hashgraph/sdk and the standards-sdk talk to over the real protocols.
 *
 *   const node = await startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 } });
 *   const client = node.client();            // operator 0.0.2
 *   ...
 *   client.close(); await node.stop();
 *
 * See client.ts for the SDK's ~grpcDeadline exit delay after the last request.
 */
import type { Client } from '@hashgraph/sdk';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nowNs } from './codec.js';
import { createClient, type SdkModule } from './client.js';
import { LocalNodeError } from './errors.js';
import { FaultPlan } from './faults.js';
import { DEFAULT_ACCOUNTS, OPERATOR_ACCOUNT, OPERATOR_KEY_DER, applyGenesis, genesisAccounts, type GenesisAccount } from './genesis.js';
import { bindServer, dropConnections as drainPort, shutdown, type grpc } from './grpc.js';
import { createHapiServer, newStats, type NodeStats } from './hapi-server.js';
import { Ledger } from './ledger.js';
import { TopicStreams, createMirrorGrpcServer } from './mirror-grpc.js';
import { createMirrorRestServer } from './mirror-rest.js';
import { Journal } from './persistence.js';
import { QueryEngine } from './queries.js';
import { LedgerState } from './state.js';
import { LOCAL_PORTS } from '../core/ports.js';

export { LocalNodeError } from './errors.js';
export { nextRunningHash, runningHashPreimage, RUNNING_HASH_VERSION } from './running-hash.js';
export type { NodeStats } from './hapi-server.js';
export { OPERATOR_KEY_DER } from './genesis.js';
export type { GenesisAccount } from './genesis.js';
export { startLocalNodeProcess, type LocalNodeProcess } from './process.js';

export const DEFAULT_PORTS = LOCAL_PORTS;

export interface LocalNodeOptions {
  ports?: { consensus?: number; mirrorGrpc?: number; mirrorRest?: number }; // defaults 50211 / 5600 / 5551; 0 = ephemeral
  host?: string; // default 127.0.0.1
  mirrorLagMs?: number; // mirror REST + gRPC see a message only this long after consensus
  consensusDelayMs?: number; // receipt is UNKNOWN until this long after submit
  stateDir?: string; // persist ledger (topics, messages, accounts) across restarts
  accounts?: number; // pre-funded ED25519, ECDSA and alias-ECDSA accounts of each kind (default 10, like hiero-local-node)
  quiet?: boolean;
}

export interface LocalNodeFaults {
  injectPrecheck(method: string, status: string, count?: number): void;
  injectGrpcError(method: string, code: number, count?: number): void;
  dropConnections(): void;
  setConsensusDelay(ms: number): void;
  setMirrorLag(ms: number): void;
  clear(): void;
}

export interface LocalNode {
  ports: { consensus: number; mirrorGrpc: number; mirrorRest: number };
  mirrorRestUrl: string;
  operator: { accountId: string; privateKey: string };
  accounts: GenesisAccount[];
  faults: LocalNodeFaults;
  /** An SDK Client configured for this node with the operator (default 0.0.2) set. */
  client(operator?: { accountId: string; privateKey: string }): Client;
  /** Calls per gRPC method and the emulator's own handler time. */
  stats(): NodeStats;
  stop(): Promise<void>;
}

function checkMs(name: string, v: number | undefined): number {
  if (v === undefined) return 0;
  if (!Number.isFinite(v) || v < 0) throw new LocalNodeError('BAD_OPTION', `${name} must be a non-negative number of ms, got ${v}`, { hint: `set ${name} to 0 or more` });
  return v;
}

function checkPort(name: string, v: number | undefined, fallback: number): number {
  const p = v ?? fallback;
  if (!Number.isInteger(p) || p < 0 || p > 65535) throw new LocalNodeError('BAD_OPTION', `${name} port must be 0..65535, got ${p}`, { hint: 'use 0 for any free port' });
  return p;
}

function listenHttp(server: HttpServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException): void => {
      reject(
        new LocalNodeError(err.code === 'EADDRINUSE' ? 'PORT_IN_USE' : 'BIND_FAILED', `mirror REST could not listen on ${host}:${port}: ${err.message}`, {
          hint: err.code === 'EADDRINUSE' ? `another local node holds port ${port}; stop it or choose other ports (0 = any free port)` : 'check the host and port options',
          cause: err,
        }),
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
  const wanted = {
    consensus: checkPort('consensus', options.ports?.consensus, DEFAULT_PORTS.consensus),
    mirrorGrpc: checkPort('mirrorGrpc', options.ports?.mirrorGrpc, DEFAULT_PORTS.mirrorGrpc),
    mirrorRest: checkPort('mirrorRest', options.ports?.mirrorRest, DEFAULT_PORTS.mirrorRest),
  };
  let mirrorLagMs = checkMs('mirrorLagMs', options.mirrorLagMs);
  const consensusDelayMs = checkMs('consensusDelayMs', options.consensusDelayMs);
  const requestedAccounts = options.accounts ?? DEFAULT_ACCOUNTS;
  if (!Number.isInteger(requestedAccounts) || requestedAccounts < 0 || requestedAccounts > 1000) {
    throw new LocalNodeError('BAD_OPTION', `accounts must be 0..1000, got ${requestedAccounts}`, { hint: 'the default is 10 of each kind' });
  }
  // The SDK is only needed for client(); loading it alongside binding keeps start-up short.
  const sdkPromise: Promise<SdkModule> = import('@hashgraph/sdk');

  const state = new LedgerState();
  const journal = options.stateDir ? new Journal(options.stateDir, state) : undefined;
  let funded: GenesisAccount[];
  if (journal?.exists()) {
    // Genesis as recorded in the journal wins over the `accounts` option.
    const n = journal.load((count, ns) => applyGenesis(state, genesisAccounts(count), ns));
    funded = genesisAccounts(n).map((a) => a.info);
  } else {
    const accounts = genesisAccounts(requestedAccounts);
    const ns = nowNs();
    applyGenesis(state, accounts, ns);
    journal?.writeGenesis(requestedAccounts, ns);
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
  const stats = newStats();
  const hapi = createHapiServer({ ledger, queries: new QueryEngine(ledger), faults, stats });
  const ports = { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 };
  const mirrorGrpc = createMirrorGrpcServer({ streams, faults, consensusEndpoint: () => ({ host, port: ports.consensus }) });
  const rest = createMirrorRestServer({ state, lagMs: () => mirrorLagMs });

  const servers: grpc.Server[] = [];
  try {
    ports.consensus = await bindServer(hapi, host, wanted.consensus, 'consensus gRPC');
    servers.push(hapi);
    ports.mirrorGrpc = await bindServer(mirrorGrpc, host, wanted.mirrorGrpc, 'mirror gRPC');
    servers.push(mirrorGrpc);
    ports.mirrorRest = await listenHttp(rest, host, wanted.mirrorRest);
  } catch (err) {
    await Promise.all([hapi, mirrorGrpc].map((s) => shutdown(s)));
    rest.close();
    ledger.stop();
    throw err;
  }
  const sdk = await sdkPromise;

  const operator = { accountId: `0.0.${OPERATOR_ACCOUNT}`, privateKey: OPERATOR_KEY_DER };
  let stopped: Promise<void> | undefined;
  const node: LocalNode = {
    ports,
    mirrorRestUrl: `http://${host}:${ports.mirrorRest}`,
    operator,
    accounts: funded,
    faults: {
      injectPrecheck: (method, status, count) => faults.injectPrecheck(method, status, count),
      injectGrpcError: (method, code, count) => faults.injectGrpcError(method, code, count),
      dropConnections: () => {
        drainPort(hapi, host, ports.consensus);
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
      clear: () => {
        faults.clear();
        ledger.setConsensusDelay(consensusDelayMs);
        mirrorLagMs = checkMs('mirrorLagMs', options.mirrorLagMs);
      },
    },
    client: (op) => createClient(sdk, { host, consensus: ports.consensus, mirrorGrpc: ports.mirrorGrpc }, op ?? operator),
    stats: () => ({ ...stats, calls: { ...stats.calls } }),
    stop: () => {
      stopped ??= (async () => {
        ledger.flushPending();
        ledger.stop();
        streams.closeAll();
        journal?.flush();
        rest.closeAllConnections();
        await Promise.all([shutdown(hapi), shutdown(mirrorGrpc), new Promise<void>((resolve) => rest.close(() => resolve()))]);
      })();
      return stopped;
    },
  };
  if (!options.quiet) {
    process.stderr.write(`local node: consensus ${host}:${ports.consensus}, mirror gRPC ${host}:${ports.mirrorGrpc}, mirror REST ${node.mirrorRestUrl}\n`);
  }
  return node;
}
