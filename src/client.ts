/**
 * The hcs25 client: one object that owns every connection the pipeline needs — the Hedera SDK client (consensus
 * nodes and the operator), the mirror REST client and, when HCS-10 agents are asked, the runner's own HCS-10
 * identity — and closes them all once. Actions (listed in `src/actions.ts`) take it as their first argument, as viem's do.
 *
 *   const client = createHcs25Client(loadConfig());
 *   try { const { agents } = await discoverAgents(client, { registry: '0.0.1234' }); … } finally { await client.close(); }
 *
 * Everything is made on first use: a read-only command never builds an SDK client, and no HCS-10 identity is made
 * unless an HCS-10 agent is asked.
 */
import type { Client } from '@hashgraph/sdk';
import { requireOperator, type OperatorConfig, type ResolvedConfig } from './config/load.js';
import type { NetworkConfig } from './config/networks.js';
import type { StoredIdentity } from './hcs10/identity.js';
import { createClient, parsePrivateKey, type ClientTuning } from './hedera/client.js';
import { MirrorRestClient, type MirrorRestOptions } from './hedera/mirror-rest.js';
import { ensureConsensusReachable } from './hedera/reachability.js';
import { sdkTransport, type SubmitTransport } from './publish/sdk-transport.js';
import { operatorSigner } from './publish/signer.js';

export interface Hcs25ClientOptions {
  /** SDK tuning; the default suits a pipeline (5 s per gRPC attempt, 30 s per request). */
  tuning?: ClientTuning;
  /** Mirror REST client options other than its URL (timeouts, retries). */
  mirror?: Omit<MirrorRestOptions, 'baseUrl'>;
  /** A prepared SDK client (tests, benches, programs that already have one). The hcs25 client does not close it. */
  sdk?: Client;
  /** Progress lines while an HCS-10 identity is made (topics, profile). */
  onNote?: (line: string) => void;
}

export interface Hcs25Client {
  readonly config: ResolvedConfig;
  readonly network: NetworkConfig;
  /** The configured operator, if any (read-only actions need none). */
  readonly operator: OperatorConfig | undefined;
  /** The mirror REST client (made on first use). */
  readonly mirror: MirrorRestClient;
  /** The Hedera SDK client with the operator set (made on first use; needs an operator). */
  readonly sdk: Client;
  /** The operator, or a ConfigError that says which variables to set. */
  requireOperator(): OperatorConfig;
  /**
   * The SDK client once a consensus node has answered a connection (checked once per client, within seconds):
   * actions that submit transactions start with it, so an unreachable network fails fast with what was tried.
   */
  connect(): Promise<Client>;
  /**
   * Where submitters build, sign and send transactions: the SDK client with the operator's signer (made on first
   * use; needs an operator).
   */
  submitTransport(): SubmitTransport;
  /**
   * The runner's HCS-10 identity (inbound/outbound topics, HCS-11 profile), made once per operator and network and
   * stored in the state directory; later calls and later runs reuse it.
   */
  hcs10Identity(): Promise<{ identity: StoredIdentity; created: boolean }>;
  /** Closes what this client made. Safe to call more than once. */
  close(): Promise<void>;
}

/** Default SDK tuning of the pipeline: short gRPC attempts, so a dead node is noticed and another one tried. */
export const PIPELINE_TUNING: ClientTuning = { grpcDeadlineMs: 5_000, requestTimeoutMs: 30_000 };

export function createHcs25Client(config: ResolvedConfig, options: Hcs25ClientOptions = {}): Hcs25Client {
  let sdk: Client | undefined = options.sdk;
  let mirror: MirrorRestClient | undefined;
  let identity: Promise<{ identity: StoredIdentity; created: boolean }> | undefined;
  let closed: Promise<void> | undefined;
  let reachable: Promise<void> | undefined;
  let transport: SubmitTransport | undefined;
  const ownsSdk = !options.sdk;

  const client: Hcs25Client = {
    config,
    network: config.network,
    operator: config.operator,
    get mirror() {
      mirror ??= new MirrorRestClient({
        timeoutMs: config.mirrorTimeoutMs,
        ...(options.onNote && { onRetry: options.onNote }),
        ...options.mirror,
        baseUrl: config.network.mirrorRestUrl,
      });
      return mirror;
    },
    get sdk() {
      if (!sdk) {
        requireOperator(config);
        sdk = createClient(config, options.tuning ?? PIPELINE_TUNING);
      }
      return sdk;
    },
    requireOperator: () => requireOperator(config),
    async connect() {
      const sdk = client.sdk;
      reachable ??= ensureConsensusReachable(Object.keys(sdk.network), config.network.ledger);
      reachable.catch(() => (reachable = undefined));
      await reachable;
      return sdk;
    },
    submitTransport() {
      transport ??= sdkTransport(client.sdk, operatorSigner(parsePrivateKey(requireOperator(config))));
      return transport;
    },
    hcs10Identity() {
      identity ??= (async () => {
        const [{ ensureRunnerIdentity }, sdk] = await Promise.all([import('./hcs10/identity.js'), client.connect()]);
        return ensureRunnerIdentity({
          client: sdk,
          stateDir: config.stateDir,
          network: config.network.ledger,
          ...(options.onNote && { onProgress: options.onNote }),
        });
      })();
      // A failed attempt (a node that was down) may be retried by a later call.
      identity.catch(() => (identity = undefined));
      return identity;
    },
    close() {
      closed ??= (async () => {
        if (ownsSdk) sdk?.close();
        await mirror?.close();
      })();
      return closed;
    },
  };
  return client;
}
