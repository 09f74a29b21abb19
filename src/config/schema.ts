import { z } from 'zod';
import { NETWORK_NAMES } from './networks.js';
import { DURATION } from '../core/duration.js';
import { entityIdSchema } from '../core/id-schemas.js';

const entityId = entityIdSchema;
const hostPort = z.string().regex(/^[A-Za-z0-9.\-[\]:]+:\d{1,5}$/, 'must be host:port');

/**
 * Everything configurable, in the shape of the JSON config file. Environment variables and flags are mapped onto
 * these keys (see ENV_VARS); the merged object is validated once, here.
 */
export const configInputSchema = z
  .object({
    network: z
      .enum(NETWORK_NAMES as [string, ...string[]])
      .describe('local | solo | testnet | previewnet | mainnet | custom'),
    operatorId: entityId.describe('account that pays for and signs submissions'),
    operatorKey: z.string().min(1).describe('operator private key (DER hex, or raw hex with operatorKeyType)'),
    operatorKeyFile: z.string().min(1).describe('file holding the operator private key'),
    operatorKeyType: z.enum(['ed25519', 'ecdsa', 'der']).describe('how to read a raw hex operator key'),
    nodes: z.record(hostPort, entityId).describe('custom consensus nodes: {"host:port": "0.0.3"}'),
    mirrorGrpc: z.array(hostPort).describe('custom mirror gRPC endpoints'),
    mirrorRestUrl: z.url({ protocol: /^https?$/ }).describe('mirror node REST base URL (without /api/v1)'),
    mirrorTimeoutMs: z
      .number()
      .int()
      .min(100)
      .max(600_000)
      .describe('how long one mirror node request may take before it is retried, ms (default 10000)'),
    retryFor: z
      .string()
      .regex(DURATION, 'must be a duration like 90s, 30m, 24h or 7d')
      .describe('how long `run` waits out a busy or unreachable network without progress before stopping (default 5m)'),
    stateDir: z.string().min(1).describe('where run journals are kept'),
    topic: entityId.describe('signal topic'),
    registry: entityId.describe('registry topic'),
    maxFeeHbar: z.number().positive().max(10_000).describe('cap on the total fees of one run, in hbar'),
    concurrency: z.number().int().min(1).max(1000).describe('agents evaluated at once'),
    budgetMs: z.number().int().min(100).max(600_000).describe('time budget per eval, ms'),
    allowPrivateEndpoints: z.boolean().describe('allow agent endpoints on private/loopback addresses'),
    publishers: z.array(entityId).describe('trusted publisher accounts (consumer allow-list)'),
    ipfsGateway: z.url().describe('gateway for ipfs:// profile references'),
    agentHeaders: z
      .record(z.string().min(1), z.record(z.string().regex(/^[A-Za-z0-9-]+$/), z.string().regex(/^[A-Z_][A-Z0-9_]*$/)))
      .describe(
        'per-agent HTTP headers: {"<subject UAID, endpoint origin or host>": {"Authorization": "ENV_VAR_NAME"}}; values are read from the environment, never from a registry',
      ),
  })
  .partial()
  .strict();

export type ConfigInput = z.infer<typeof configInputSchema>;

/** Environment variable → config key. `.env.example` documents each. */
export const ENV_VARS: Record<
  string,
  { key: keyof ConfigInput; kind: 'string' | 'number' | 'boolean' | 'list' | 'nodes' }
> = {
  HCS25_NETWORK: { key: 'network', kind: 'string' },
  HCS25_OPERATOR_ID: { key: 'operatorId', kind: 'string' },
  HCS25_OPERATOR_KEY: { key: 'operatorKey', kind: 'string' },
  HCS25_OPERATOR_KEY_FILE: { key: 'operatorKeyFile', kind: 'string' },
  HCS25_OPERATOR_KEY_TYPE: { key: 'operatorKeyType', kind: 'string' },
  HCS25_NODES: { key: 'nodes', kind: 'nodes' },
  HCS25_MIRROR_GRPC: { key: 'mirrorGrpc', kind: 'list' },
  HCS25_MIRROR_REST_URL: { key: 'mirrorRestUrl', kind: 'string' },
  HCS25_MIRROR_TIMEOUT_MS: { key: 'mirrorTimeoutMs', kind: 'number' },
  HCS25_RETRY_FOR: { key: 'retryFor', kind: 'string' },
  HCS25_STATE_DIR: { key: 'stateDir', kind: 'string' },
  HCS25_TOPIC: { key: 'topic', kind: 'string' },
  HCS25_REGISTRY: { key: 'registry', kind: 'string' },
  HCS25_MAX_FEE_HBAR: { key: 'maxFeeHbar', kind: 'number' },
  HCS25_CONCURRENCY: { key: 'concurrency', kind: 'number' },
  HCS25_BUDGET_MS: { key: 'budgetMs', kind: 'number' },
  HCS25_ALLOW_PRIVATE_ENDPOINTS: { key: 'allowPrivateEndpoints', kind: 'boolean' },
  HCS25_PUBLISHERS: { key: 'publishers', kind: 'list' },
  HCS25_IPFS_GATEWAY: { key: 'ipfsGateway', kind: 'string' },
};

/** Keys whose values are secret: never echoed back in a validation error. */
export const SECRET_KEYS: ReadonlySet<string> = new Set(['operatorKey']);
