import { LOCAL_NODE_PORT_STEP, LOCAL_PORTS, type LocalPorts } from '../core/ports.js';

/** Where a Hedera network's consensus nodes and mirror node are. */
export type LedgerName = 'local' | 'testnet' | 'previewnet' | 'mainnet' | 'custom';
export const LEDGER_NAMES: readonly LedgerName[] = ['local', 'testnet', 'previewnet', 'mainnet', 'custom'];
/** What `--network` takes: the ledgers, and `solo`, a local ledger at Solo's default forwarded ports. */
export const NETWORK_NAMES: readonly string[] = ['local', 'solo', 'testnet', 'previewnet', 'mainnet', 'custom'];

export interface NetworkConfig {
  ledger: LedgerName;
  /** Consensus nodes, "host:port" → node account id. Empty for public networks: the SDK's built-in address book is used. */
  nodes: Record<string, string>;
  /** Mirror node gRPC ("host:port"); empty for public networks (SDK default). */
  mirrorGrpc: string[];
  /** Mirror node REST base, without `/api/v1`. */
  mirrorRestUrl: string;
}

/**
 * The published genesis operator of hiero-local-node (and of our emulator). It is a well-known test key,
 * valid only on a local node; it is never used for any other network.
 */
export const LOCAL_GENESIS_OPERATOR = {
  accountId: '0.0.2',
  privateKey: '302e020100300506032b65700422042091132178e72057a1d7528025956fe39b0b847f200ab59b2fdd367017f3087137',
} as const;

/** A local network; `nodeCount` consensus nodes 0.0.3, 0.0.4, … on the local multi-node port scheme. */
export function localNetwork(host = '127.0.0.1', ports: LocalPorts = LOCAL_PORTS, nodeCount = 1): NetworkConfig {
  const nodes: Record<string, string> = {};
  for (let i = 0; i < nodeCount; i++) nodes[`${host}:${ports.consensus + i * LOCAL_NODE_PORT_STEP}`] = `0.0.${3 + i}`;
  return {
    ledger: 'local',
    nodes,
    mirrorGrpc: [`${host}:${ports.mirrorGrpc}`],
    mirrorRestUrl: `http://${host}:${ports.mirrorRest}`,
  };
}

export const NETWORK_PRESETS: Record<Exclude<LedgerName, 'custom'>, NetworkConfig> = {
  local: localNetwork(),
  testnet: { ledger: 'testnet', nodes: {}, mirrorGrpc: [], mirrorRestUrl: 'https://testnet.mirrornode.hedera.com' },
  previewnet: {
    ledger: 'previewnet',
    nodes: {},
    mirrorGrpc: [],
    mirrorRestUrl: 'https://previewnet.mirrornode.hedera.com',
  },
  mainnet: {
    ledger: 'mainnet',
    nodes: {},
    mirrorGrpc: [],
    mirrorRestUrl: 'https://mainnet-public.mirrornode.hedera.com',
  },
};

/**
 * A default Solo deployment (`solo one-shot single deploy`), as its port-forwards expose it: consensus node 0.0.3 on
 * 35211, the mirror node's gRPC and REST both behind its ingress on 38081. A local ledger with the same genesis
 * operator as hiero-local-node; other ports are set with HCS25_NODES and HCS25_MIRROR_*.
 */
export const SOLO_NETWORK: NetworkConfig = {
  ledger: 'local',
  nodes: { '127.0.0.1:35211': '0.0.3' },
  mirrorGrpc: ['127.0.0.1:38081'],
  mirrorRestUrl: 'http://127.0.0.1:38081',
};

/** HashScan link for an entity, where one exists. */
export function explorerUrl(
  ledger: LedgerName,
  kind: 'topic' | 'account' | 'transaction',
  id: string,
): string | undefined {
  if (ledger !== 'testnet' && ledger !== 'mainnet' && ledger !== 'previewnet') return undefined;
  return `https://hashscan.io/${ledger}/${kind}/${id}`;
}

/** Where a person can look a topic message up: HashScan (public networks only) and the mirror node's REST API. */
export interface MessageLinks {
  hashscan: string | null;
  /** Null when the mirror node is not known (a server started without its network). */
  mirror: string | null;
}

/**
 * Links to one topic message. HashScan names a message by its transaction's consensus timestamp (as the HTML report's
 * links do); the mirror node by topic and sequence number.
 */
export function messageLinks(
  network: { ledger: string; mirrorRestUrl?: string } | undefined,
  topic: string,
  sequenceNumber: number,
  consensusTimestamp: string,
): MessageLinks {
  const ledger = network?.ledger;
  const hashscan =
    ledger === 'testnet' || ledger === 'mainnet' || ledger === 'previewnet'
      ? (explorerUrl(ledger, 'transaction', consensusTimestamp) ?? null)
      : null;
  const base = network?.mirrorRestUrl?.replace(/\/+$/, '');
  return { hashscan, mirror: base ? `${base}/api/v1/topics/${topic}/messages/${sequenceNumber}` : null };
}
