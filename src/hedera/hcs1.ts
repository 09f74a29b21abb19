/**
 * HCS-1 file reader: `hcs://1/<topic>` → bytes, straight from the mirror node (no CDN). Order chunks by `o`, join
 * `c`, strip the `data:<mime>;base64,` prefix, base64-decode, decompress as the topic memo says (zstd via fzstd,
 * brotli via node:zlib), and check the SHA-256 from the memo. Every size is capped before memory is spent on it.
 */
import { createHash } from 'node:crypto';
import { brotliCompressSync, brotliDecompressSync, constants as zlibConstants } from 'node:zlib';
import { Decompress } from 'fzstd';
import { z } from 'zod';
import { Hcs25Error } from '../core/errors.js';
import type { MirrorRestClient, TopicInfo } from './mirror-rest.js';

export class Hcs1Error extends Hcs25Error {
  constructor(message: string, hint?: string) {
    super('HCS1_INVALID', message, { hint: hint ?? 'the HCS-1 file is unusable; ask its owner to re-inscribe it' });
    this.name = 'Hcs1Error';
  }
}

export type Hcs1Compression = 'zstd' | 'brotli';

export interface Hcs1Memo {
  sha256: string;
  compression: Hcs1Compression;
  encoding: 'base64';
}

export interface Hcs1File {
  topicId: string;
  mimeType: string;
  bytes: Buffer;
  sha256: string;
  compression: Hcs1Compression;
}

export interface ReadHcs1Options {
  /** Largest decompressed file accepted, bytes. Default 1 MiB (profiles, cards and records are a few KB). */
  maxBytes?: number;
  /** Enforce the spec's topic rules: a submit key and no admin key. Default true. */
  requireKeys?: boolean;
  signal?: AbortSignal;
}

const DEFAULT_MAX_BYTES = 1024 * 1024;
/** zstd windows up to this are allowed even for small files; streaming compressors pick 8 MiB windows routinely. */
const MAX_ZSTD_WINDOW = 8 * 1024 * 1024;
/**
 * Messages read from a file topic are capped as well as characters: empty or junk messages add no characters, so
 * without it a topic of millions of them (written by its submit-key holder) would be paged to the end. Writers
 * chunk at close to the 1024-byte message size; a file needing chunks shorter than this on average is refused.
 */
const MIN_AVERAGE_CHUNK_CHARS = 64;

const MEMO = /^([0-9a-fA-F]{64}):(zstd|brotli):(base64)$/;

export function parseHcs1Memo(memo: string): Hcs1Memo | null {
  const m = MEMO.exec(memo.trim());
  if (!m) return null;
  return { sha256: m[1]!.toLowerCase(), compression: m[2] as Hcs1Compression, encoding: 'base64' };
}

const chunkSchema = z.object({ o: z.number().int().min(0), c: z.string() });

/** Reads and verifies the HCS-1 file stored on `topicId`. Throws Hcs1Error (with a reason) for anything invalid. */
export async function readHcs1File(
  mirror: MirrorRestClient,
  topicId: string,
  options: ReadHcs1Options = {},
): Promise<Hcs1File> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const topic = await mirror.getTopic(topicId, options.signal);
  if (topic === null) throw new Hcs1Error(`HCS-1 topic ${topicId} does not exist`, 'check the hcs://1/ reference');
  const memo = checkTopic(topic, options.requireKeys ?? true);
  // base64 of the compressed file, plus room for the data: prefix; compression may grow incompressible data a little.
  const maxChars = Math.ceil((maxBytes * 1.1 + 1024) / 3) * 4 + 256;
  const maxMessages = Math.max(1000, Math.ceil(maxChars / MIN_AVERAGE_CHUNK_CHARS));
  const chunks = new Map<number, string>();
  let chars = 0;
  let messages = 0;
  for await (const msg of mirror.topicMessages(topicId, { signal: options.signal })) {
    if (++messages > maxMessages) {
      // "larger than" marks it as too large for callers that tell size from other faults (the HCS-10 requester).
      throw new Hcs1Error(
        `HCS-1 file ${topicId} spans more than ${maxMessages} messages, larger than a file of at most ${maxBytes} bytes needs`,
      );
    }
    const chunk = parseChunk(msg.message);
    if (chunk === null || chunks.has(chunk.o)) continue;
    chars += chunk.c.length;
    if (chars > maxChars)
      throw new Hcs1Error(
        `HCS-1 file ${topicId} is larger than ${maxBytes} bytes`,
        'files this large are not agent descriptions',
      );
    chunks.set(chunk.o, chunk.c);
  }
  return { topicId, ...assembleHcs1(memo, chunks, { maxBytes, what: `HCS-1 file ${topicId}` }) };
}

function checkTopic(topic: TopicInfo, requireKeys: boolean): Hcs1Memo {
  const memo = parseHcs1Memo(topic.memo);
  if (memo === null) {
    throw new Hcs1Error(
      `topic ${topic.topic_id} is not an HCS-1 file (memo "${topic.memo.slice(0, 80)}" is not <sha256>:<zstd|brotli>:base64)`,
    );
  }
  if (requireKeys && (topic.submit_key === null || topic.submit_key === undefined)) {
    throw new Hcs1Error(`HCS-1 topic ${topic.topic_id} has no submit key, so anyone could have written into it`);
  }
  if (requireKeys && topic.admin_key !== null && topic.admin_key !== undefined) {
    throw new Hcs1Error(`HCS-1 topic ${topic.topic_id} has an admin key, so the file could be deleted`);
  }
  return memo;
}

function parseChunk(message: Buffer): { o: number; c: string } | null {
  // Messages other than chunks (someone with the submit key writing junk) are ignored; the hash check decides.
  if (message.length === 0 || message[0] !== 0x7b /* { */) return null;
  try {
    const parsed = chunkSchema.safeParse(JSON.parse(message.toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** Pure part of the reader: chunks keyed by `o` → verified file bytes. */
export function assembleHcs1(
  memo: Hcs1Memo,
  chunks: Map<number, string>,
  options: { maxBytes?: number; what?: string } = {},
): Omit<Hcs1File, 'topicId'> {
  const what = options.what ?? 'HCS-1 file';
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  if (chunks.size === 0) throw new Hcs1Error(`${what} has no chunks`);
  const parts: string[] = [];
  for (let o = 0; o < chunks.size; o++) {
    const c = chunks.get(o);
    if (c === undefined) throw new Hcs1Error(`${what} is missing chunk o=${o}`);
    parts.push(c);
  }
  let text = parts.join('');
  let mimeType = 'application/octet-stream';
  const prefix = /^data:([^;,]*)(?:;[^;,]*)*;base64,/.exec(text.slice(0, 512));
  if (prefix) {
    mimeType = prefix[1] || mimeType;
    text = text.slice(prefix[0].length);
  }
  const compressed = Buffer.from(text, 'base64');
  const bytes = decompress(memo.compression, compressed, maxBytes, what);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== memo.sha256) {
    throw new Hcs1Error(
      `${what} does not match the SHA-256 in its memo (memo ${memo.sha256.slice(0, 12)}…, content ${sha256.slice(0, 12)}…)`,
    );
  }
  return { mimeType, bytes, sha256, compression: memo.compression };
}

function decompress(algo: Hcs1Compression, data: Buffer, maxBytes: number, what: string): Buffer {
  if (algo === 'brotli') {
    try {
      return brotliDecompressSync(data, { maxOutputLength: maxBytes });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
        throw new Hcs1Error(`${what} decompresses to more than ${maxBytes} bytes`);
      }
      throw new Hcs1Error(`${what} is not valid brotli data`);
    }
  }
  return zstdDecompress(data, maxBytes, what);
}

/** fzstd allocates the window a frame header asks for, so every frame header is checked before decoding starts. */
function zstdDecompress(data: Buffer, maxBytes: number, what: string): Buffer {
  const problem = zstdFramesProblem(data, Math.max(maxBytes, MAX_ZSTD_WINDOW), maxBytes);
  if (problem) throw new Hcs1Error(`${what} is not usable zstd data: ${problem}`);
  const out: Uint8Array[] = [];
  let size = 0;
  const tooLarge = new Hcs1Error(`${what} decompresses to more than ${maxBytes} bytes`);
  const stream = new Decompress((chunk) => {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge;
    out.push(chunk);
  });
  try {
    stream.push(data, true);
  } catch (err) {
    if (err === tooLarge) throw err;
    throw new Hcs1Error(`${what} is not valid zstd data`);
  }
  return Buffer.concat(out, size);
}

/** Walks zstd frames by their headers (no decoding): returns why the data is refused, or null. */
export function zstdFramesProblem(data: Uint8Array, maxWindow: number, maxContent: number): string | null {
  let p = 0;
  let frames = 0;
  const u32 = (at: number): number =>
    (data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16)) + data[at + 3]! * 0x1000000;
  while (p < data.length) {
    if (data.length - p < 4) return 'truncated frame';
    const magic = u32(p);
    if (magic >= 0x184d2a50 && magic <= 0x184d2a5f) {
      if (data.length - p < 8) return 'truncated skippable frame';
      p += 8 + u32(p + 4);
      continue;
    }
    if (magic !== 0xfd2fb528) return frames === 0 ? 'no zstd frame' : 'trailing data after the last frame';
    if (++frames > 64) return 'too many frames';
    const fhd = data[p + 4];
    if (fhd === undefined) return 'truncated frame header';
    if (fhd & 0x08) return 'reserved bit set';
    const fcsFlag = fhd >> 6;
    const singleSegment = (fhd >> 5) & 1;
    const checksum = (fhd >> 2) & 1;
    const dictBytes = [0, 1, 2, 4][fhd & 3]!;
    let q = p + 5;
    let window = 0;
    if (!singleSegment) {
      const wd = data[q++];
      if (wd === undefined) return 'truncated frame header';
      const base = 2 ** (10 + (wd >> 3));
      window = base + (base / 8) * (wd & 7);
    }
    q += dictBytes;
    const fcsBytes = fcsFlag === 0 ? singleSegment : 1 << fcsFlag;
    if (q + fcsBytes > data.length) return 'truncated frame header';
    let fcs = 0;
    for (let i = fcsBytes - 1; i >= 0; i--) fcs = fcs * 256 + data[q + i]!;
    if (fcsFlag === 1) fcs += 256;
    q += fcsBytes;
    if (singleSegment) window = fcs;
    if (window > maxWindow) return `window of ${window} bytes is too large`;
    if (fcsBytes > 0 && fcs > maxContent) return `declared size of ${fcs} bytes is too large`;
    for (;;) {
      if (q + 3 > data.length) return 'truncated block';
      const header = data[q]! | (data[q + 1]! << 8) | (data[q + 2]! << 16);
      const last = header & 1;
      const type = (header >> 1) & 3;
      const size = header >>> 3;
      if (type === 3) return 'reserved block type';
      q += 3 + (type === 1 ? 1 : size);
      if (q > data.length) return 'truncated block';
      if (last) break;
    }
    p = q + (checksum ? 4 : 0);
    if (p > data.length) return 'truncated checksum';
  }
  return frames === 0 ? 'no zstd frame' : null;
}

// ---------- writer side (pure): used by `hcs25 registry register` and tests ----------

export interface Hcs1Encoded {
  /** Topic memo: `<sha256>:brotli:base64`. */
  memo: string;
  /** Message bodies in order, each `{"o":n,"c":"…"}` with at most `chunkChars` characters of content. */
  messages: string[];
}

/** Encodes a file for HCS-1 with brotli (node has no zstd compressor before v22). */
export function encodeHcs1File(bytes: Uint8Array, mimeType: string, chunkChars = 1000): Hcs1Encoded {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const compressed = brotliCompressSync(bytes, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 11 } });
  const text = `data:${mimeType};base64,${compressed.toString('base64')}`;
  const messages: string[] = [];
  for (let i = 0, o = 0; i < text.length; i += chunkChars, o++) {
    messages.push(JSON.stringify({ o, c: text.slice(i, i + chunkChars) }));
  }
  return { memo: `${sha256}:brotli:base64`, messages };
}
