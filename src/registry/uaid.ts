/**
 * Subject ids (HCS-14 UAIDs) for agents that do not declare one, built with the standards-sdk's `createUaid`
 * (`aid` form). The SDK takes about a second to import, so it is loaded on first use only.
 *
 * Choices where HCS-14 leaves room (see the HCS standards digest §5):
 * - HTTP agents: registry `self`, `proto` from the protocol (`http` → `rest`; `openai` has no HCS-14 value and is
 *   kept as `openai`), nativeId = the endpoint's host (with its port, so two local agents on one host differ), uid `0`.
 * - HCS-10 agents: registry `hol`, proto `hcs-10`, nativeId = CAIP-10 `hedera:<network>:<account>`, uid =
 *   `<inbound>@<account>` (or the bare account when there is no inbound topic). CAIP-2 has no `local` Hedera network:
 *   a local node's ledger id is the one CAIP calls `devnet`, so `local` and `custom` map to `devnet`.
 * - version `1.0.0` unless the description has one; skills from the profile's `aiAgent.capabilities`, else none.
 */
import type { LedgerName } from '../config/networks.js';
import type { Protocol } from '../core/agent.js';

/**
 * The part of the standards-sdk's HCS-14 API used here. Declared locally because the SDK's bundled .d.ts files use
 * extensionless re-exports that NodeNext resolution cannot follow, so its types arrive empty.
 */
interface Hcs14Api {
  createUaid(
    input: { registry: string; name: string; version: string; protocol: string; nativeId: string; skills: number[] },
    params?: { uid?: string; registry?: string; proto?: string; nativeId?: string; domain?: string },
  ): Promise<string>;
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
  return flat(await sdkUaid(input));
}

/**
 * `s` as one flat string. The SDK builds a UAID piece by piece (its base58 id a character at a time), and V8 keeps
 * such a string as a tree of every piece (about 1.4 KB for a 130-character UAID) until something flattens it: a
 * watcher or a registry-wide run holds one per agent.
 */
function flat(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}

async function sdkUaid(input: UaidInput): Promise<string> {
  const { createUaid } = await loadSdk();
  const version = input.version?.trim() || '1.0.0';
  const skills = [...new Set(input.skills ?? [])];
  if (input.accountId !== undefined) {
    const nativeId = `hedera:${caipNetwork(input.network)}:${input.accountId}`;
    const uid = input.inboundTopicId ? `${input.inboundTopicId}@${input.accountId}` : input.accountId;
    return createUaid(
      { registry: UAID_REGISTRY_HCS10, name: input.name, version, protocol: 'hcs-10', nativeId, skills },
      { uid, registry: UAID_REGISTRY_HCS10, proto: 'hcs-10', nativeId },
    );
  }
  if (input.endpoint === undefined) throw new Error('an agent needs an endpoint or an account to get a UAID');
  const nativeId = new URL(input.endpoint).host;
  const proto = hcs14Proto(input.protocol);
  return createUaid(
    { registry: UAID_REGISTRY_SELF, name: input.name, version, protocol: proto, nativeId, skills },
    { uid: '0', registry: UAID_REGISTRY_SELF, proto, nativeId },
  );
}
