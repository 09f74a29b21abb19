/**
 * Resolves a metadata value or reference to a JSON document: inline objects and JSON text, `data:` URIs, HCS-1
 * files (`hcs://1/…`), HCS-2 topics (`hcs://2/…`: their latest entry), http(s) URLs through the guarded fetch, and
 * `ipfs://` / `ar://` only through a configured gateway. Reference chains are cycle-checked and depth-limited.
 */
import { Hcs25Error, errorMessage } from '../core/errors.js';
import { readHcs1File } from '../hedera/hcs1.js';
import { isMirrorOutage, type MirrorRestClient } from '../hedera/mirror-rest.js';
import { Hcs2Folder, parseHcs2Memo, type Metadata } from './hcs2.js';
import { guardedMetadataFetch, type MetadataFetch } from './fetch-metadata.js';
import { preview } from '../core/terminal.js';
import { SkipList, parseJsonObject } from './skips.js';
import { formatHrl, parseHrl } from '../core/hrl.js';

export class ResolveError extends Hcs25Error {
  constructor(message: string) {
    super('RESOLVE', message);
    this.name = 'ResolveError';
  }
}

export interface ResolveContext {
  mirror: MirrorRestClient;
  fetch: MetadataFetch;
  ipfsGateway?: string;
  arweaveGateway?: string;
  /** Largest document accepted from any source, bytes. */
  maxDocumentBytes: number;
  /** Per-fetch timeout for http(s), ms. */
  timeoutMs: number;
  /** Most references followed from one value. */
  maxDepth: number;
  signal?: AbortSignal;
  /** Leaf fetches (files, URLs, topic heads) shared across entries; never whole chains, so cycles cannot deadlock. */
  cache: Map<string, Promise<Leaf>>;
  /** Source bytes of the documents held in `cache`. */
  cacheBytes: number;
}

export interface ResolvedDocument {
  doc: Record<string, unknown>;
  /** The chain of references followed, outermost first (empty for inline metadata). */
  via: string[];
}

/** What a leaf fetch yields: a document, or another reference to follow. */
type Leaf = { doc: Record<string, unknown>; bytes: number } | { ref: Metadata };

const MAX_CACHE = 5000;
/**
 * Fetched documents stay cached only within this many source bytes: MAX_CACHE documents at the size cap (distinct
 * URLs cost a hostile registry nothing) would hold gigabytes for the whole discovery.
 */
const MAX_CACHE_BYTES = 16 * 1024 * 1024;

export interface ResolveSettings {
  mirror: MirrorRestClient;
  /** http(s) fetch; default: the guarded fetch (closed by `close()`). */
  fetch?: MetadataFetch;
  /** For the default fetch: reach private/loopback addresses (local networks). Default false. */
  allowPrivateEndpoints?: boolean;
  ipfsGateway?: string;
  arweaveGateway?: string;
  /** Default 256 KiB. */
  maxDocumentBytes?: number;
  /** Default 10,000 ms. */
  fetchTimeoutMs?: number;
  signal?: AbortSignal;
}

/** A fresh context (own cache); `close()` releases the default fetch's connections. */
export function openResolveContext(settings: ResolveSettings): { ctx: ResolveContext; close: () => Promise<void> } {
  const maxDocumentBytes = settings.maxDocumentBytes ?? 256 * 1024;
  const own = settings.fetch
    ? undefined
    : guardedMetadataFetch({
        allowPrivateEndpoints: settings.allowPrivateEndpoints ?? false,
        maxBytes: maxDocumentBytes,
      });
  const ctx: ResolveContext = {
    mirror: settings.mirror,
    fetch: settings.fetch ?? own!.fetch,
    ...(settings.ipfsGateway !== undefined && { ipfsGateway: settings.ipfsGateway }),
    ...(settings.arweaveGateway !== undefined && { arweaveGateway: settings.arweaveGateway }),
    maxDocumentBytes,
    timeoutMs: settings.fetchTimeoutMs ?? 10_000,
    maxDepth: 4,
    ...(settings.signal && { signal: settings.signal }),
    cache: new Map(),
    cacheBytes: 0,
  };
  return { ctx, close: async () => own?.close() };
}

export async function resolveDocument(
  value: Metadata,
  ctx: ResolveContext,
  via: string[] = [],
): Promise<ResolvedDocument> {
  if (typeof value !== 'string') return { doc: value, via };
  const text = value.trim();
  // Inline JSON text: the rule isInlineMetadata (discover/hcs2.ts) restates for the watcher.
  if (text.startsWith('{')) return { doc: parseDoc(Buffer.from(text), ctx, 'inline metadata'), via };
  const uri = canonicalRef(text);
  if (via.includes(uri)) throw new ResolveError(`reference cycle: ${[...via, uri].join(' → ')}`);
  if (via.length >= ctx.maxDepth)
    throw new ResolveError(`references nested more than ${ctx.maxDepth} deep: ${[...via, uri].join(' → ')}`);
  const chain = [...via, uri];
  const leaf = await cachedLeaf(uri, ctx);
  if ('doc' in leaf) return { doc: leaf.doc, via: chain };
  return resolveDocument(leaf.ref, ctx, chain);
}

function cachedLeaf(uri: string, ctx: ResolveContext): Promise<Leaf> {
  if (uri.startsWith('data:')) return fetchLeaf(uri, ctx);
  let p = ctx.cache.get(uri);
  if (p === undefined) {
    p = fetchLeaf(uri, ctx);
    if (ctx.cache.size < MAX_CACHE) {
      ctx.cache.set(uri, p);
      p.then(
        (leaf) => {
          if (!('doc' in leaf)) return;
          if (ctx.cacheBytes + leaf.bytes > MAX_CACHE_BYTES) ctx.cache.delete(uri);
          else ctx.cacheBytes += leaf.bytes;
        },
        () => undefined,
      );
    }
  }
  return p;
}

async function fetchLeaf(uri: string, ctx: ResolveContext): Promise<Leaf> {
  const hrl = parseHrl(uri);
  if (hrl) {
    if (hrl.standard === 1) return hcs1Doc(hrl.topicId, ctx);
    if (hrl.standard === 2) return hcs2Head(hrl.topicId, ctx);
    throw new ResolveError(`hcs://${hrl.standard}/ references are not supported (only hcs://1 and hcs://2)`);
  }
  if (uri.startsWith('data:')) {
    const bytes = dataUri(uri);
    return { doc: parseDoc(bytes, ctx, 'data: URI'), bytes: bytes.length };
  }
  if (uri.startsWith('https://') || uri.startsWith('http://')) return httpDoc(uri, ctx);
  const ipfs = /^ipfs:\/\/(.+)$/.exec(uri);
  if (ipfs) {
    if (!ctx.ipfsGateway)
      throw new ResolveError(`${clip(uri)} needs an IPFS gateway; none is configured (HCS25_IPFS_GATEWAY)`);
    return httpDoc(`${ctx.ipfsGateway.replace(/\/+$/, '')}/ipfs/${ipfs[1]}`, ctx);
  }
  const ar = /^ar:\/\/(.+)$/.exec(uri);
  if (ar) {
    if (!ctx.arweaveGateway) throw new ResolveError(`${clip(uri)} needs an Arweave gateway; none is configured`);
    return httpDoc(`${ctx.arweaveGateway.replace(/\/+$/, '')}/${ar[1]}`, ctx);
  }
  throw new ResolveError(`unsupported metadata reference ${preview(uri)}`);
}

async function hcs1Doc(topicId: string, ctx: ResolveContext): Promise<Leaf> {
  try {
    const file = await readHcs1File(ctx.mirror, topicId, {
      maxBytes: ctx.maxDocumentBytes,
      ...(ctx.signal && { signal: ctx.signal }),
    });
    return { doc: parseDoc(file.bytes, ctx, formatHrl(1, topicId)), bytes: file.bytes.length };
  } catch (err) {
    if (err instanceof ResolveError || isMirrorOutage(err)) throw err;
    throw new ResolveError(`hcs://1/${topicId}: ${errorMessage(err)}`);
  }
}

/** An `hcs://2/` reference means the topic's current entry: the latest live one (for a non-indexed topic, its latest register). */
async function hcs2Head(topicId: string, ctx: ResolveContext): Promise<Leaf> {
  const topic = await ctx.mirror.getTopic(topicId, ctx.signal);
  if (topic === null) throw new ResolveError(`hcs://2/${topicId} does not exist`);
  const memo = parseHcs2Memo(topic.memo);
  if (memo === null) throw new ResolveError(`hcs://2/${topicId} is not an HCS-2 topic (memo ${preview(topic.memo)})`);
  const folder = new Hcs2Folder(topicId, memo.indexed, new SkipList(0));
  let count = 0;
  for await (const msg of ctx.mirror.topicMessages(topicId, ctx.signal ? { signal: ctx.signal } : {})) {
    folder.add(msg);
    // A profile or card topic is small; a huge one is not what an HCS-11 reference means.
    if (++count > 10_000)
      throw new ResolveError(`hcs://2/${topicId} has more than 10000 messages; not a profile topic`);
  }
  const head = folder.entries().at(-1);
  if (head === undefined) throw new ResolveError(`hcs://2/${topicId} has no live entry`);
  // This folder releases nothing: metadata is text, an object or absent.
  if (head.metadata !== undefined && head.metadata !== null) return { ref: head.metadata };
  return { ref: `hcs://1/${head.tId}` };
}

async function httpDoc(url: string, ctx: ResolveContext): Promise<Leaf> {
  let res: Awaited<ReturnType<typeof ctx.fetch>>;
  try {
    res = await ctx.fetch(url, { timeoutMs: ctx.timeoutMs, ...(ctx.signal && { signal: ctx.signal }) });
  } catch (err) {
    throw new ResolveError(`${clip(url)}: ${errorMessage(err)}`);
  }
  if (res.status !== 200) throw new ResolveError(`${clip(url)} answered HTTP ${res.status}`);
  const bytes = Buffer.from(res.body);
  return { doc: parseDoc(bytes, ctx, clip(url)), bytes: bytes.length };
}

function parseDoc(bytes: Buffer, ctx: ResolveContext, what: string): Record<string, unknown> {
  const parsed = parseJsonObject(bytes, ctx.maxDocumentBytes);
  if (!parsed.ok) throw new ResolveError(`${what}: ${parsed.reason}`);
  return parsed.doc;
}

function dataUri(uri: string): Buffer {
  const comma = uri.indexOf(',');
  if (comma < 0) throw new ResolveError('data: URI without a comma');
  const header = uri.slice(5, comma);
  const payload = uri.slice(comma + 1);
  if (header.split(';').includes('base64')) return Buffer.from(payload, 'base64');
  try {
    return Buffer.from(decodeURIComponent(payload));
  } catch {
    throw new ResolveError('data: URI is not valid percent-encoding');
  }
}

/** One spelling per reference, so the cache and the cycle check see `HCS://1/0.0.5 ` and `hcs://1/0.0.5` as one. */
function canonicalRef(ref: string): string {
  const hrl = parseHrl(ref);
  return hrl ? formatHrl(hrl.standard, hrl.topicId) : ref;
}

function clip(s: string): string {
  return s.length > 100 ? `${s.slice(0, 100)}…` : s;
}
