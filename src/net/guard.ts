import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import type { buildConnector } from 'undici';
import { Hcs25Error } from '../core/errors.js';

/**
 * Endpoints come from untrusted registries, so a hostile entry could point the runner at the operator's own
 * network (cloud metadata, admin consoles). Every connection is checked against these ranges with the address that
 * is actually dialled, after DNS resolution — which also defeats DNS rebinding between check and connect.
 */
const NON_PUBLIC_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, including the 169.254.169.254 metadata service
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
];
const NON_PUBLIC_V6: Array<[string, number]> = [
  ['::', 96], // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d, never a public address
  ['fc00::', 7], // unique local (includes AWS's fd00:ec2::254 metadata)
  ['fe80::', 10], // link-local
  ['fec0::', 10], // deprecated site-local
  ['ff00::', 8], // multicast
  ['100::', 64], // discard-only
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215)
];

const blockList = new BlockList();
for (const [net, prefix] of NON_PUBLIC_V4) blockList.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of NON_PUBLIC_V6) blockList.addSubnet(net, prefix, 'ipv6');

/** Strips the brackets URLs put around IPv6 literals. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** IPv4 embedded in an IPv6 address by NAT64 (64:ff9b::/96) or 6to4 (2002::/16); BlockList handles ::ffff:0:0/96. */
function embeddedV4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:64:ff9b::|2002:)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const nat64 = /^64:ff9b::([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (nat64) return hexPairToV4(nat64[1]!, nat64[2]!);
  const sixToFour = /^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4})(?::|$)/.exec(lower);
  if (sixToFour) return hexPairToV4(sixToFour[1]!, sixToFour[2]!);
  return undefined;
}

function hexPairToV4(hi: string, lo: string): string {
  const a = parseInt(hi, 16);
  const b = parseInt(lo, 16);
  return `${a >> 8}.${a & 255}.${b >> 8}.${b & 255}`;
}

/** True for loopback, private, link-local, metadata, multicast and other addresses that are not the public internet. */
export function isNonPublicAddress(address: string): boolean {
  const ip = bareHost(address);
  const family = isIP(ip);
  if (family === 4) return blockList.check(ip, 'ipv4');
  if (family === 6) {
    if (blockList.check(ip, 'ipv6')) return true;
    const v4 = embeddedV4(ip);
    return v4 !== undefined && blockList.check(v4, 'ipv4');
  }
  // Not an IP at all: the caller must resolve it first; treat as unsafe so a mistake fails closed.
  return true;
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** DNS resolution, injectable so tests can map names to addresses without any real network. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Thrown (inside the connector) when an address is refused; the HTTP layer maps it to a `refused` failure. */
export class PrivateAddressError extends Hcs25Error {
  constructor(hostname: string, address: string) {
    super(
      'PRIVATE_ADDRESS',
      hostname === address
        ? `refused to connect to non-public address ${address}`
        : `refused to connect to ${hostname}: it resolves to non-public address ${address}`,
      {
        hint: 'pass --allow-private-endpoints (default on --network local) if the agent is meant to be on a private network',
      },
    );
    this.name = 'PrivateAddressError';
  }
}

export interface GuardOptions {
  allowPrivateEndpoints: boolean;
  resolver?: Resolver;
  /** The connector that dials the checked address; tests inject one that maps addresses to local servers. */
  baseConnector?: buildConnector.connector;
}

/**
 * Wraps an undici connector: resolve the name, refuse if ANY address is non-public (a name that mixes public and
 * private answers is a rebinding trick), then dial exactly the checked address. TLS keeps the original name for SNI
 * and certificate checks because undici derives `servername` from `host`, which is left untouched.
 */
export function guardedConnector(
  options: GuardOptions & { baseConnector: buildConnector.connector },
): buildConnector.connector {
  const resolver = options.resolver ?? systemResolver;
  const base = options.baseConnector;
  return (opts, callback) => {
    const hostname = bareHost(opts.hostname);
    const resolve: Promise<ResolvedAddress[]> = isIP(hostname)
      ? Promise.resolve([{ address: hostname, family: isIP(hostname) }])
      : resolver(hostname);
    resolve.then(
      (addresses) => {
        const first = addresses[0];
        if (!first) {
          callback(Object.assign(new Error(`no address found for ${hostname}`), { code: 'ENOTFOUND' }), null);
          return;
        }
        if (!options.allowPrivateEndpoints) {
          const bad = addresses.find((a) => isNonPublicAddress(a.address));
          if (bad) {
            callback(new PrivateAddressError(hostname, bad.address), null);
            return;
          }
        }
        base({ ...opts, hostname: first.address }, callback);
      },
      (err: unknown) => callback(err instanceof Error ? err : new Error(String(err)), null),
    );
  };
}
