/**
 * HCS-14 UAIDs, both ways: the subject id of an agent that declares none (built by a publisher) and the routing
 * parameters of any UAID (read by a consumer). Built in the standards-sdk's `createUaid` `aid` form: the SDK's
 * canonical agent data (`canonicalizeAgentData`), its SHA-384 in base58, then the parameters. The hash is taken here
 * with node:crypto rather than by `createUaid`: in an ES module the SDK's Node adapter fails and it falls back to
 * WebCrypto's asynchronous digest, a thread-pool job per agent. A test checks the result equals `createUaid`'s. The
 * SDK is slow to import, so it is loaded on first use only.
 *
 * Choices where HCS-14 leaves room (see the HCS standards digest §5):
 * - HTTP agents: registry `self`, `proto` from the protocol (`http` → `rest`; `openai` has no HCS-14 value and is
 *   kept as `openai`), nativeId = the endpoint's host (with its port, so two local agents on one host differ), uid `0`.
 * - HCS-10 agents: registry `hol`, proto `hcs-10`, nativeId = CAIP-10 `hedera:<network>:<account>`, uid =
 *   `<inbound>@<account>` (or the bare account when there is no inbound topic). CAIP-2 has no `local` Hedera network:
 *   a local node's ledger id is the one CAIP calls `devnet`, so `local` and `custom` map to `devnet`.
 * - version `1.0.0` unless the description has one; skills from the profile's `aiAgent.capabilities`, else none.
 */
import { createHash } from 'node:crypto';
import type { LedgerName } from '../config/networks.js';
import type { Protocol } from '../core/agent.js';
import { UsageError } from '../core/errors.js';

/**
 * The part of the standards-sdk's HCS-14 API used here. Declared locally because the SDK's bundled .d.ts files use
 * extensionless re-exports that NodeNext resolution cannot follow, so its types arrive empty.
 */
interface Hcs14Api {
  /** Validates (throws on bad data) and normalises; `canonicalJson` is what the `aid` id hashes. */
  canonicalizeAgentData(input: AidInput): { canonicalJson: string };
}

interface AidInput {
  registry: string;
  name: string;
  version: string;
  protocol: string;
  nativeId: string;
  skills: number[];
}

interface AidParams {
  uid: string;
  registry: string;
  proto: string;
  nativeId: string;
}

let sdk: Promise<Hcs14Api> | undefined;

function loadSdk(): Promise<Hcs14Api> {
  sdk ??= import('@hashgraphonline/standards-sdk') as Promise<unknown> as Promise<Hcs14Api>;
  return sdk;
}

export const UAID_REGISTRY_SELF = 'self';
export const UAID_REGISTRY_HCS10 = 'hol';

export interface UaidInput {
  name: string;
  protocol: Protocol;
  network: LedgerName;
  endpoint?: string;
  accountId?: string;
  inboundTopicId?: string;
  version?: string;
  skills?: number[];
}

export function caipNetwork(network: LedgerName): 'mainnet' | 'testnet' | 'previewnet' | 'devnet' {
  return network === 'local' || network === 'custom' ? 'devnet' : network;
}

export function hcs14Proto(protocol: Protocol): string {
  return protocol === 'http' ? 'rest' : protocol;
}

/**
 * The UAID of an agent that declares none. An account id makes it an HCS-10 identity (whatever transport is used to
 * reach it); otherwise the endpoint's host is the native id.
 */
export async function buildUaid(input: UaidInput): Promise<string> {
  const { canonicalizeAgentData } = await loadSdk();
  const { data, params } = aidOf(input);
  const id = base58(createHash('sha384').update(canonicalizeAgentData(data).canonicalJson, 'utf8').digest());
  // As the SDK's `buildParamString`: the parameters set, in this order.
  const set = (['uid', 'registry', 'proto', 'nativeId'] as const)
    .filter((k) => params[k])
    .map((k) => `${k}=${params[k]}`);
  return set.length > 0 ? `uaid:aid:${id};${set.join(';')}` : `uaid:aid:${id}`;
}

/** The standards-sdk `createUaid` arguments of an agent (see the module comment for the choices). */
export function aidOf(input: UaidInput): { data: AidInput; params: AidParams } {
  const version = input.version?.trim() || '1.0.0';
  const skills = [...new Set(input.skills ?? [])];
  if (input.accountId !== undefined) {
    const nativeId = `hedera:${caipNetwork(input.network)}:${input.accountId}`;
    const uid = input.inboundTopicId ? `${input.inboundTopicId}@${input.accountId}` : input.accountId;
    return {
      data: { registry: UAID_REGISTRY_HCS10, name: input.name, version, protocol: 'hcs-10', nativeId, skills },
      params: { uid, registry: UAID_REGISTRY_HCS10, proto: 'hcs-10', nativeId },
    };
  }
  if (input.endpoint === undefined) throw new UsageError('an agent needs an endpoint or an account to get a UAID');
  const nativeId = new URL(input.endpoint).host;
  const proto = hcs14Proto(input.protocol);
  return {
    data: { registry: UAID_REGISTRY_SELF, name: input.name, version, protocol: proto, nativeId, skills },
    params: { uid: '0', registry: UAID_REGISTRY_SELF, proto, nativeId },
  };
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Bitcoin-alphabet base58 (leading zero bytes as '1'), as the SDK encodes the `aid` hash. */
function base58(bytes: Uint8Array): string {
  let zeros = 0;
  while (zeros < bytes.length && bytes[zeros] === 0) zeros++;
  // Little-endian base-58 digits of the number the bytes spell.
  const digits: number[] = [];
  for (let i = zeros; i < bytes.length; i++) {
    let carry = bytes[i]!;
    for (let j = 0; j < digits.length; j++) {
      const v = digits[j]! * 256 + carry;
      digits[j] = v % 58;
      carry = (v / 58) | 0;
    }
    for (; carry > 0; carry = (carry / 58) | 0) digits.push(carry % 58);
  }
  const out = Buffer.allocUnsafe(zeros + digits.length);
  out.fill(BASE58.charCodeAt(0), 0, zeros);
  for (let i = 0; i < digits.length; i++) out[zeros + i] = BASE58.charCodeAt(digits[digits.length - 1 - i]!);
  return out.toString('latin1');
}

// ---------- reading ----------

/**
 * The routing parameters of an HCS-14 UAID (`uaid:aid:<id>;uid=0;registry=hol;proto=a2a;nativeId=…`).
 * HCS-25 applicability reads `registry` and `proto` from here. Subjects come from public topics, so this never
 * throws: anything that is not a UAID simply has no parameters.
 */
export interface UaidParts {
  /** `aid` or `did`, or null when the string is not a UAID. */
  target: 'aid' | 'did' | null;
  /** The identifier between `uaid:{target}:` and the first `;`. */
  id: string;
  /** Parameters in the order they appear; a repeated key keeps its first value. */
  params: Record<string, string>;
  registry?: string;
  proto?: string;
  nativeId?: string;
}

/** A UAID's parts without `params`. */
export type UaidRouting = Omit<UaidParts, 'params'>;

/** Both prefixes (`uaid:aid:`, `uaid:did:`) are this long. */
const PREFIX_LENGTH = 9;

export function parseUaid(uaid: string): UaidParts {
  const target = uaid.startsWith('uaid:aid:') ? 'aid' : uaid.startsWith('uaid:did:') ? 'did' : null;
  if (target === null) return { target: null, id: uaid, params: {} };
  const [id = '', ...pairs] = uaid.slice(PREFIX_LENGTH).split(';');
  // A null-prototype record: a hostile `__proto__=x` parameter must stay a plain key.
  const params: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) continue;
    const key = pair.slice(0, eq);
    if (!(key in params)) params[key] = decodeValue(pair.slice(eq + 1));
  }
  const parts: UaidParts = { target, id, params };
  if (params.registry) parts.registry = params.registry;
  if (params.proto) parts.proto = params.proto;
  if (params.nativeId) parts.nativeId = params.nativeId;
  return parts;
}

/** `parseUaid` without the `params` record: what scoring keeps of each subject. */
export function uaidRouting(uaid: string): UaidRouting {
  const { params: _params, ...routing } = parseUaid(uaid);
  return routing;
}

/** HCS-14 values are plain; tolerate percent-encoding from emitters that escape `;` or `=` in a value. */
function decodeValue(value: string): string {
  if (!value.includes('%')) return value;
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
