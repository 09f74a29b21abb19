/** The emulator's public shapes, apart from its implementation so the child-process wrapper can share them. */
import type { Client } from '@hashgraph/sdk';
import type { GenesisAccount } from './genesis.js';
import type { NodeStats } from './hapi-server.js';

export interface LocalNodeOptions {
  /**
   * Defaults 50211 / 5600 / 5551; 0 = ephemeral. `consensus` is the first node's port (the others follow at
   * +1000, +2000, …, or are ephemeral too when it is 0), or one port per node.
   */
  ports?: { consensus?: number | number[]; mirrorGrpc?: number; mirrorRest?: number };
  /** Consensus nodes on the shared ledger, 1 … 32 (default 1, or the length of a `ports.consensus` list). */
  nodes?: number;
  host?: string; // default 127.0.0.1
  mirrorLagMs?: number; // mirror REST + gRPC see a message only this long after consensus
  consensusDelayMs?: number; // receipt is UNKNOWN until this long after submit
  stateDir?: string; // persist ledger (topics, messages, accounts) across restarts
  accounts?: number; // pre-funded ED25519, ECDSA and alias-ECDSA accounts of each kind (default 10, like hiero-local-node)
  quiet?: boolean;
}

/** Faults of one consensus node: they apply before the network-wide ones. */
export interface ConsensusNodeFaults {
  injectPrecheck(method: string, status: string, count?: number): void;
  injectGrpcError(method: string, code: number, count?: number): void;
  dropConnections(): void;
  /**
   * Answers leave the node this long after it handled the call (a node's own setting wins over the network-wide
   * one). Stopping a node then cancels calls whose transaction it has already accepted.
   */
  setLatency(ms: number): void;
  clear(): void;
}

/** Network-wide faults: precheck and gRPC faults are taken by whichever node serves the call; `clear` clears every node's too. */
export interface LocalNodeFaults extends ConsensusNodeFaults {
  setConsensusDelay(ms: number): void;
  setMirrorLag(ms: number): void;
}

export interface ConsensusNodeInfo {
  accountId: string;
  host: string;
  port: number;
  running: boolean;
}

export interface LocalNode {
  /** `consensus` is the first node's (0.0.3) port. */
  ports: { consensus: number; mirrorGrpc: number; mirrorRest: number };
  /** Every consensus node, "host:port" → node account id: what `Client.forNetwork()` takes. */
  network: Record<string, string>;
  /** The consensus nodes in account order, with whether each is running now. */
  consensusNodes(): ConsensusNodeInfo[];
  /** Faults of one node (e.g. "0.0.4"). */
  nodeFaults(accountId: string): ConsensusNodeFaults;
  /** Stops one node's gRPC server (calls in flight are cancelled); the ledger, the other nodes and the mirror keep running. */
  stopConsensusNode(accountId: string): Promise<void>;
  /** Starts a stopped node again on the same port. */
  startConsensusNode(accountId: string): Promise<void>;
  mirrorRestUrl: string;
  operator: { accountId: string; privateKey: string };
  accounts: GenesisAccount[];
  faults: LocalNodeFaults;
  /** An SDK Client configured for every node of this network with the operator (default 0.0.2) set. */
  client(operator?: { accountId: string; privateKey: string }): Client;
  /** Calls per gRPC method and the emulator's own handler time. */
  stats(): NodeStats;
  stop(): Promise<void>;
}
