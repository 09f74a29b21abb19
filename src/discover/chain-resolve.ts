/**
 * A discovery ResolveContext for HCS-10 work that needs only the chain: profiles stored as HCS-1 files (or HCS-2
 * topics) are read from the mirror node; off-chain references are refused unless a fetch is given.
 */
import type { MirrorRestClient } from '../hedera/mirror-rest.js';
import type { MetadataFetch } from './fetch-metadata.js';
import { openResolveContext, type ResolveContext } from './resolve.js';

export interface ChainResolveOptions {
  fetch?: MetadataFetch;
  ipfsGateway?: string;
  signal?: AbortSignal;
}

const refuseOffChain: MetadataFetch = () =>
  Promise.reject(new Error('off-chain profiles are not fetched here (HCS-10 profiles live on HCS-1)'));

export function chainResolveContext(mirror: MirrorRestClient, options: ChainResolveOptions = {}): ResolveContext {
  // With a fetch given, openResolveContext owns nothing that needs closing.
  return openResolveContext({
    mirror,
    fetch: options.fetch ?? refuseOffChain,
    ...(options.ipfsGateway && { ipfsGateway: options.ipfsGateway }),
    ...(options.signal && { signal: options.signal }),
  }).ctx;
}
