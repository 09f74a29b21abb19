/**
 * An SDK Client for an emulator. On the standard ports it is `Client.forLocalNode()`, which puts the SDK in its
 * local-node retry mode (1000 attempts, constant 250 ms backoff, unhealthy node retried); on other ports the SDK
 * uses production retry rules: exponential backoff and, for this single node, a gRPC error fails the request with
 * "All nodes are unhealthy" instead of retrying. Both get a short node backoff and a 60 s request timeout.
 *
 * Process exit: every SDK attempt races a grpcDeadline timer that is never cleared, so Node stays alive up to
 * grpcDeadline after the last request even after `client.close()`. The helper lowers grpcDeadline to 5 s; callers
 * that must exit at once should call `process.exit()` after closing (or use a test runner that forces exit).
 */
import type { Client } from '@hashgraph/sdk';
import { LOCAL_PORTS } from '../core/ports.js';

export type SdkModule = typeof import('@hashgraph/sdk');

const GRPC_DEADLINE_MS = 5_000;
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * `network` is the emulator's node map ("host:port" → "0.0.3", …). With several nodes the SDK fails over between
 * them; it stays in local-node retry mode whenever 127.0.0.1:50211 is one of them.
 */
export function createClient(
  sdk: SdkModule,
  endpoint: { host: string; network: Record<string, string>; mirrorGrpc: number },
  operator: { accountId: string; privateKey: string },
): Client {
  const addresses = Object.keys(endpoint.network);
  const standard = addresses.length === 1 && addresses[0] === `127.0.0.1:${LOCAL_PORTS.consensus}`;
  const client = standard
    ? sdk.Client.forLocalNode()
    : sdk.Client.forNetwork(endpoint.network, { scheduleNetworkUpdate: false });
  if (!standard || endpoint.mirrorGrpc !== LOCAL_PORTS.mirrorGrpc)
    client.setMirrorNetwork([`${endpoint.host}:${endpoint.mirrorGrpc}`]);
  client.setRequestTimeout(REQUEST_TIMEOUT_MS);
  client.setGrpcDeadline(GRPC_DEADLINE_MS);
  // One gRPC error would otherwise quarantine a node for 8–16 s (readmission is checked at most every 8 s).
  client.setNodeMinBackoff(250);
  client.setNodeMaxBackoff(1_000);
  client.setNodeMinReadmitPeriod(250);
  client.setNodeMaxReadmitPeriod(1_000);
  if (!standard) client.setMaxBackoff(2_000);
  client.setOperator(sdk.AccountId.fromString(operator.accountId), sdk.PrivateKey.fromStringDer(operator.privateKey));
  return client;
}
