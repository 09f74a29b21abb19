import { Client, PrivateKey } from '@hashgraph/sdk';
import { ConfigError } from '../core/errors.js';
import { boundTimestampMemory } from './tx.js';
import type { OperatorConfig, ResolvedConfig } from '../config/load.js';

export interface ClientTuning {
  /** Overall time an SDK request may take, retries included. */
  requestTimeoutMs?: number;
  /** Per-attempt gRPC deadline. */
  grpcDeadlineMs?: number;
}

/**
 * An SDK client for the configured network, with the operator set.
 *
 * Tuning, and why: after one gRPC UNAVAILABLE the SDK quarantines a node for its node backoff (8 s doubling to 16 s+).
 * With a single-node network (a local node, a custom endpoint) that means "All nodes are unhealthy" for that long,
 * so the node backoff is kept short; public networks have many nodes and keep the SDK defaults there.
 * `network.nodes` may name several nodes (HCS25_NODES, or `localNetwork(host, ports, n)` for a multi-node emulator):
 * the SDK and the publisher then fail over between them.
 */
export function createClient(config: Pick<ResolvedConfig, 'network' | 'operator'>, tuning: ClientTuning = {}): Client {
  boundTimestampMemory();
  const { network } = config;
  let client: Client;
  if (network.ledger === 'testnet' || network.ledger === 'previewnet' || network.ledger === 'mainnet') {
    client = Client.forName(network.ledger, { scheduleNetworkUpdate: false });
    if (Object.keys(network.nodes).length > 0) client.setNetwork(network.nodes);
    if (network.mirrorGrpc.length > 0) client.setMirrorNetwork(network.mirrorGrpc);
  } else {
    client = Client.forNetwork(network.nodes, { scheduleNetworkUpdate: false });
    client.setMirrorNetwork(network.mirrorGrpc);
    client.setNodeMinBackoff(250);
    client.setNodeMaxBackoff(1000);
    // Without this, a request with no explicit node list finds no node for up to 8 s after one gRPC error.
    client.setNodeMinReadmitPeriod(250);
    client.setNodeMaxReadmitPeriod(1000);
  }
  client.setRequestTimeout(tuning.requestTimeoutMs ?? 60_000);
  // A short per-attempt deadline also bounds how long the SDK's uncleared deadline timers keep the process alive.
  client.setGrpcDeadline(tuning.grpcDeadlineMs ?? 10_000);
  if (config.operator) client.setOperator(config.operator.accountId, parsePrivateKey(config.operator));
  return client;
}

/** Parses the operator key; errors never include the key. */
export function parsePrivateKey(operator: OperatorConfig): PrivateKey {
  const raw = operator.privateKey.reveal();
  const hex = raw.startsWith('0x') ? raw.slice(2) : raw;
  try {
    switch (operator.keyType) {
      case 'ed25519':
        return PrivateKey.fromStringED25519(hex);
      case 'ecdsa':
        return PrivateKey.fromStringECDSA(hex);
      case 'der':
        return PrivateKey.fromStringDer(hex);
    }
  } catch {
    throw new ConfigError(
      `the operator key for ${operator.accountId} could not be parsed as ${operator.keyType === 'der' ? 'a DER-encoded' : `an ${operator.keyType.toUpperCase()}`} private key`,
      {
        hint: 'check HCS25_OPERATOR_KEY / HCS25_OPERATOR_KEY_FILE and HCS25_OPERATOR_KEY_TYPE',
      },
    );
  }
}
