import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import type { z } from 'zod';
import { durationMs } from '../core/duration.js';
import { didYouMean } from '../core/suggest.js';
import { ConfigError } from '../core/errors.js';
import {
  LOCAL_GENESIS_OPERATOR,
  NETWORK_PRESETS,
  SOLO_NETWORK,
  type LedgerName,
  type NetworkConfig,
} from './networks.js';
import { ENV_VARS, SECRET_KEYS, configInputSchema, type ConfigInput } from './schema.js';
import { Secret, mayBeKeyMaterial, quoteInput } from './secret.js';

export interface OperatorConfig {
  accountId: string;
  privateKey: Secret;
  keyType: 'ed25519' | 'ecdsa' | 'der';
}

export interface ResolvedConfig {
  network: NetworkConfig;
  /** Absent when no operator is configured (read-only commands still work). */
  operator?: OperatorConfig;
  stateDir: string;
  topic?: string;
  registry?: string;
  maxFeeHbar: number;
  concurrency: number;
  budgetMs: number;
  /** One mirror node request's time limit before it is retried, ms. */
  mirrorTimeoutMs: number;
  /** How long `run` waits out a busy or unreachable network without progress, ms (set as a duration such as `5m`). */
  retryForMs: number;
  allowPrivateEndpoints: boolean;
  publishers: string[];
  ipfsGateway?: string;
  agentHeaders: Record<string, Record<string, string>>;
  /** Where each value came from, for `--json` diagnostics; never includes values. */
  sources: Record<string, 'flag' | 'env' | 'file' | 'default'>;
}

export interface LoadConfigOptions {
  /** Command-line flags, already parsed, keyed like ConfigInput plus `config` and `envFile`. */
  flags?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export const DEFAULTS = {
  stateDir: '.hcs25',
  maxFeeHbar: 5,
  concurrency: 16,
  budgetMs: 30_000,
  mirrorTimeoutMs: 10_000,
  retryFor: '5m',
} as const;

const DEFAULT_CONFIG_FILE = 'hcs25.config.json';

/**
 * Resolves configuration with precedence flags > environment (`.env` included) > config file > defaults, and
 * validates the merged result. Errors name the flag, variable or file key at fault, never a secret's value.
 */
export function loadConfig(options: LoadConfigOptions = {}): ResolvedConfig {
  const cwd = options.cwd ?? process.cwd();
  const flags = options.flags ?? {};
  const env = withDotEnv(options.env ?? process.env, cwd, flags.envFile as string | undefined);

  const fileInput = readConfigFile(cwd, (flags.config as string | undefined) || env.HCS25_CONFIG || undefined);
  const envInput = readEnv(env);
  const flagInput = pickDefined(flags, Object.keys(configInputSchema.shape));

  const sources: ResolvedConfig['sources'] = {};
  const merged: Record<string, unknown> = {};
  for (const [layer, input] of [
    ['file', fileInput],
    ['env', envInput],
    ['flag', flagInput],
  ] as const) {
    for (const [key, value] of Object.entries(input)) {
      merged[key] = value;
      sources[key] = layer;
    }
  }

  rejectMisplacedKeys(merged, sources);
  const parsed = configInputSchema.safeParse(merged);
  if (!parsed.success) throw configErrorFrom(parsed.error, sources, merged);
  return resolve_(parsed.data, sources, cwd);
}

function resolve_(input: ConfigInput, sources: ResolvedConfig['sources'], cwd: string): ResolvedConfig {
  // `solo` is a local ledger at Solo's default ports: everything else about it is as for `local`.
  const ledger = (input.network === 'solo' ? 'local' : (input.network ?? 'local')) as LedgerName;
  const network = networkFor(ledger, input, input.network === 'solo' ? SOLO_NETWORK : undefined);
  const operator = operatorFor(ledger, input, cwd);
  for (const key of ['stateDir', 'maxFeeHbar', 'concurrency', 'budgetMs'] as const) sources[key] ??= 'default';
  return {
    network,
    ...(operator ? { operator } : {}),
    stateDir: resolve(cwd, input.stateDir ?? DEFAULTS.stateDir),
    ...(input.topic ? { topic: input.topic } : {}),
    ...(input.registry ? { registry: input.registry } : {}),
    maxFeeHbar: input.maxFeeHbar ?? DEFAULTS.maxFeeHbar,
    concurrency: input.concurrency ?? DEFAULTS.concurrency,
    budgetMs: input.budgetMs ?? DEFAULTS.budgetMs,
    mirrorTimeoutMs: input.mirrorTimeoutMs ?? DEFAULTS.mirrorTimeoutMs,
    // Validated by the schema: always a duration.
    retryForMs: durationMs(input.retryFor ?? DEFAULTS.retryFor)!,
    // Loopback agents are the whole point of a local run; anywhere else an untrusted registry must not steer us inward.
    allowPrivateEndpoints: input.allowPrivateEndpoints ?? ledger === 'local',
    publishers: input.publishers ?? [],
    ...(input.ipfsGateway ? { ipfsGateway: input.ipfsGateway } : {}),
    agentHeaders: input.agentHeaders ?? {},
    sources,
  };
}

function networkFor(ledger: LedgerName, input: ConfigInput, solo?: NetworkConfig): NetworkConfig {
  if (ledger === 'custom') {
    if (!input.nodes || Object.keys(input.nodes).length === 0) {
      throw new ConfigError('network "custom" needs consensus nodes (HCS25_NODES)', {
        hint: 'set HCS25_NODES="host:port=0.0.3" (comma-separated) or "nodes" in the config file',
      });
    }
    if (!input.mirrorRestUrl) {
      throw new ConfigError('network "custom" needs a mirror node REST URL (HCS25_MIRROR_REST_URL)', {
        hint: 'set HCS25_MIRROR_REST_URL',
      });
    }
    return {
      ledger,
      nodes: input.nodes,
      mirrorGrpc: input.mirrorGrpc ?? [],
      mirrorRestUrl: trimSlash(input.mirrorRestUrl),
    };
  }
  const preset = solo ?? NETWORK_PRESETS[ledger];
  return {
    ledger,
    nodes: input.nodes ?? preset.nodes,
    mirrorGrpc: input.mirrorGrpc ?? preset.mirrorGrpc,
    mirrorRestUrl: trimSlash(input.mirrorRestUrl ?? preset.mirrorRestUrl),
  };
}

function operatorFor(ledger: LedgerName, input: ConfigInput, cwd: string): OperatorConfig | undefined {
  if (input.operatorKey && input.operatorKeyFile) {
    throw new ConfigError('both an operator key and an operator key file are set', {
      hint: 'keep one of HCS25_OPERATOR_KEY and HCS25_OPERATOR_KEY_FILE',
    });
  }
  let key: string | undefined = input.operatorKey;
  if (input.operatorKeyFile) {
    const file = resolve(cwd, input.operatorKeyFile);
    try {
      key = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new ConfigError(
        `cannot read the operator key file ${quoteInput(file, 120)}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
        {
          hint: 'check HCS25_OPERATOR_KEY_FILE points at a readable file holding only the key',
        },
      );
    }
  }
  if (!input.operatorId && !key) {
    if (ledger !== 'local') return undefined;
    return {
      accountId: LOCAL_GENESIS_OPERATOR.accountId,
      privateKey: new Secret(LOCAL_GENESIS_OPERATOR.privateKey),
      keyType: 'der',
    };
  }
  if (!input.operatorId)
    throw new ConfigError('an operator key is set but no operator account (HCS25_OPERATOR_ID)', {
      hint: 'set HCS25_OPERATOR_ID',
    });
  if (!key)
    throw new ConfigError(
      'an operator account is set but no operator key (HCS25_OPERATOR_KEY or HCS25_OPERATOR_KEY_FILE)',
      { hint: 'set HCS25_OPERATOR_KEY or HCS25_OPERATOR_KEY_FILE' },
    );
  return { accountId: input.operatorId, privateKey: new Secret(key), keyType: keyTypeOf(key, input.operatorKeyType) };
}

function keyTypeOf(key: string, declared: ConfigInput['operatorKeyType']): OperatorConfig['keyType'] {
  const hex = key.startsWith('0x') ? key.slice(2) : key;
  if (!/^[0-9a-fA-F]+$/.test(hex)) {
    throw new ConfigError('the operator key (HCS25_OPERATOR_KEY) is not hex', {
      hint: 'give a DER-encoded hex key, or a raw 32-byte hex key with HCS25_OPERATOR_KEY_TYPE',
    });
  }
  if (declared) return declared;
  if (hex.length === 64) {
    throw new ConfigError(
      'the operator key (HCS25_OPERATOR_KEY) is a raw 32-byte hex key, which can be ED25519 or ECDSA: set HCS25_OPERATOR_KEY_TYPE',
      {
        hint: 'set HCS25_OPERATOR_KEY_TYPE=ed25519 or ecdsa (the portal shows the type), or use the DER-encoded key',
      },
    );
  }
  return 'der';
}

function withDotEnv(env: NodeJS.ProcessEnv, cwd: string, envFile: string | undefined): NodeJS.ProcessEnv {
  const file = resolve(cwd, envFile ?? '.env');
  if (!existsSync(file)) {
    if (envFile) throw new ConfigError(`env file ${quoteInput(file, 120)} does not exist`, { hint: 'check --dotenv' });
    return env;
  }
  let fromFile: Record<string, string>;
  try {
    fromFile = parseEnv(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch (err) {
    throw new ConfigError(
      `cannot read env file ${quoteInput(file, 120)}: ${(err as NodeJS.ErrnoException).code ?? 'parse error'}`,
    );
  }
  // As with dotenv: the real environment wins over the file.
  return { ...fromFile, ...env };
}

function readConfigFile(cwd: string, named: string | undefined): Record<string, unknown> {
  const file = resolve(cwd, named ?? DEFAULT_CONFIG_FILE);
  if (!existsSync(file)) {
    if (named)
      throw new ConfigError(`config file ${quoteInput(file, 120)} does not exist`, {
        hint: 'check --config or HCS25_CONFIG',
      });
    return {};
  }
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    // Not the parser's message: it quotes the text around the error, which may be a key.
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new ConfigError(
      `config file ${quoteInput(file, 120)} is not valid JSON${at === undefined ? '' : ` (at character ${at})`}`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`config file ${quoteInput(file, 120)} must hold a JSON object`);
  }
  return value as Record<string, unknown>;
}

function readEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, { key, kind }] of Object.entries(ENV_VARS)) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') continue;
    out[key] = convertEnv(name, raw.trim(), kind);
  }
  return out;
}

function convertEnv(name: string, raw: string, kind: (typeof ENV_VARS)[string]['kind']): unknown {
  switch (kind) {
    case 'string':
      return raw;
    case 'number': {
      const n = Number(raw);
      if (!Number.isFinite(n)) throw new ConfigError(`${name} must be a number, got ${quoteInput(raw)}`);
      return n;
    }
    case 'boolean':
      if (/^(1|true|yes|on)$/i.test(raw)) return true;
      if (/^(0|false|no|off)$/i.test(raw)) return false;
      throw new ConfigError(`${name} must be true or false, got ${quoteInput(raw)}`);
    case 'list':
      return raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    case 'nodes': {
      const nodes: Record<string, string> = {};
      for (const part of raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)) {
        const [addr, id] = part.split('=');
        if (!addr || !id)
          throw new ConfigError(`${name} entries must look like host:port=0.0.3, got ${quoteInput(part)}`);
        nodes[addr.trim()] = id.trim();
      }
      return nodes;
    }
  }
}

function pickDefined(flags: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (flags[key] !== undefined) out[key] = flags[key];
  return out;
}

const FLAG_OR_ENV: Record<string, string> = Object.fromEntries(
  Object.entries(ENV_VARS).map(([env, { key }]) => [key, env]),
);

function configErrorFrom(
  error: z.ZodError,
  sources: ResolvedConfig['sources'],
  merged: Record<string, unknown>,
): ConfigError {
  const issue = error.issues[0]!;
  const key = String(issue.path[0] ?? '');
  // Inside a config file's object (agentHeaders, nodes): the whole path, so the entry at fault is named.
  const where =
    issue.path.length > 1 && sources[key] === 'file'
      ? `config file key ${quoteInput(issue.path.map(String).join('.'), 80)}`
      : describeSource(key, sources[key]);
  const given = merged[key];
  if (issue.code === 'invalid_value' && !SECRET_KEYS.has(key) && typeof given === 'string') {
    // A mistyped name (--network testnt): the valid names, and the likely one first.
    const names = issue.values.map(String);
    const guess = didYouMean(given, names);
    return new ConfigError(`${where}: ${quoteInput(given)} is not one of ${names.join(', ')}`, {
      ...(guess && { hint: guess }),
    });
  }
  // zod messages for strings can quote the input; for secrets say only that the shape is wrong.
  const what = SECRET_KEYS.has(key) ? 'is not a valid value' : issue.message;
  if (issue.code === 'unrecognized_keys') {
    return new ConfigError(`config file has unknown key(s): ${issue.keys.map((k) => quoteInput(k)).join(', ')}`, {
      hint: `known keys: ${Object.keys(configInputSchema.shape).join(', ')}`,
    });
  }
  return new ConfigError(`${where}: ${what}`);
}

/** Config keys whose values may be long opaque strings by nature; zod's messages for them never quote the value. */
const OPAQUE_KEYS: ReadonlySet<string> = new Set(['mirrorRestUrl', 'ipfsGateway']);

/**
 * A private key in any variable, flag or file key other than the key's own would travel on into paths, messages
 * and reports: refuse it first, naming where it is and never quoting it.
 */
function rejectMisplacedKeys(merged: Record<string, unknown>, sources: ResolvedConfig['sources']): void {
  for (const [key, value] of Object.entries(merged)) {
    if (SECRET_KEYS.has(key) || OPAQUE_KEYS.has(key) || (!holdsKeyMaterial(key) && !holdsKeyMaterial(value))) continue;
    const where = mayBeKeyMaterial(key) ? 'a config file key name' : describeSource(key, sources[key]);
    if (key === 'operatorKeyFile') {
      throw new ConfigError(`${where} holds what looks like a private key, not the path of a file`, {
        hint: "put the key itself in HCS25_OPERATOR_KEY, or write it to a file and set HCS25_OPERATOR_KEY_FILE to that file's path",
      });
    }
    throw new ConfigError(`${where} holds what looks like a private key (not shown)`, {
      hint: 'the operator key belongs in HCS25_OPERATOR_KEY or in a file named by HCS25_OPERATOR_KEY_FILE; remove it from here',
    });
  }
}

function holdsKeyMaterial(value: unknown): boolean {
  if (typeof value === 'string') return mayBeKeyMaterial(value);
  if (Array.isArray(value)) return value.some(holdsKeyMaterial);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).some(([k, v]) => mayBeKeyMaterial(k) || holdsKeyMaterial(v));
  return false;
}

/** Flags whose name is not the kebab-case of the key they set. */
const FLAG_NAMES: Record<string, string> = {
  publishers: '--publisher',
  mirrorTimeoutMs: '--mirror-timeout',
  envFile: '--dotenv',
};

function describeSource(key: string, source: string | undefined): string {
  const envName = FLAG_OR_ENV[key];
  switch (source) {
    case 'env':
      return envName ?? key;
    case 'flag':
      return FLAG_NAMES[key] ?? `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    case 'file':
      return `config file key "${key}"`;
    default:
      return key;
  }
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '').replace(/\/api\/v1$/, '');
}

/** For commands that submit: the operator, or an error that says how to configure one. */
export function requireOperator(config: ResolvedConfig): OperatorConfig {
  if (!config.operator) {
    throw new ConfigError(
      `no operator account is configured for ${config.network.ledger} (HCS25_OPERATOR_ID, HCS25_OPERATOR_KEY)`,
      {
        hint: 'set HCS25_OPERATOR_ID and HCS25_OPERATOR_KEY (or HCS25_OPERATOR_KEY_FILE), e.g. in .env',
      },
    );
  }
  return config.operator;
}
