import { createHash } from 'node:crypto';
import { brotliCompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Hcs1Error,
  assembleHcs1,
  encodeHcs1File,
  parseHcs1Memo,
  readHcs1File,
  zstdFramesProblem,
} from '../../src/hedera/hcs1.js';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { FakeMirror } from './fake-mirror.js';

/** `zstd -19` of ZSTD_PROFILE_JSON (made with the zstd CLI; node 20 has no zstd compressor). */
const ZSTD_PROFILE_B64 =
  'KLUv/WRPBHUFABKMJRpg1wMMpUpv4VBEQO+4l8mq5CEIFY1MRxFYAV3nGbBz5NMnWzHlkBkkjMt0bX//9A7N9OHmU7kt7NBjFGQQg+jT6/F8xkm9FnbuO/QXSAApjHf/Vau1rTKFH6Buvb1qK7z10//s9BCu8rMaS9ij7xI+Hb/j0Pe1EfHq1opPtxS9jUanrL86lNNt1rZDj4H06Re/ruzlXAYAEeWN18kDAoAJKIWMF179DoidUeNu/Uw=';
const ZSTD_PROFILE_JSON = JSON.stringify({
  version: '1.0',
  type: 1,
  display_name: 'Zstd Agent',
  bio: 'An agent whose profile is stored zstd-compressed in HCS-1. '.repeat(20),
  inboundTopicId: '0.0.1500',
  outboundTopicId: '0.0.1501',
  aiAgent: { type: 1, capabilities: [0, 17], model: 'gpt-x' },
});
/** `zstd -3 --no-content-size` of 4,000,000 zero bytes: 143 bytes that inflate 28,000-fold. */
const ZSTD_BOMB_B64 =
  'KLUv/QRYVAAAEAAAAQD7/znAAgIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAAgAQAAIAEAACABAAA0gIAFmZaAM=';

const sha = (s: string | Buffer): string => createHash('sha256').update(s).digest('hex');

function chunksOf(text: string, size: number): Map<number, string> {
  const m = new Map<number, string>();
  for (let i = 0; i * size < text.length; i++) m.set(i, text.slice(i * size, (i + 1) * size));
  return m;
}

describe('HCS-1 memo', () => {
  it('parses <sha256>:<zstd|brotli>:base64 and nothing else', () => {
    const h = 'A'.repeat(64);
    expect(parseHcs1Memo(`${h}:zstd:base64`)).toEqual({
      sha256: 'a'.repeat(64),
      compression: 'zstd',
      encoding: 'base64',
    });
    expect(parseHcs1Memo(`${h}:brotli:base64`)?.compression).toBe('brotli');
    expect(parseHcs1Memo(`${h}:gzip:base64`)).toBeNull();
    expect(parseHcs1Memo(`${h.slice(1)}:zstd:base64`)).toBeNull();
    expect(parseHcs1Memo('hcs-2:0:60')).toBeNull();
  });
});

describe('assembleHcs1', () => {
  it('orders chunks, strips the data: prefix, decompresses zstd and checks the hash', () => {
    const text = `data:application/json;base64,${ZSTD_PROFILE_B64}`;
    const chunks = chunksOf(text, 100);
    const shuffled = new Map([...chunks].reverse());
    const file = assembleHcs1({ sha256: sha(ZSTD_PROFILE_JSON), compression: 'zstd', encoding: 'base64' }, shuffled);
    expect(file.mimeType).toBe('application/json');
    expect(file.bytes.toString()).toBe(ZSTD_PROFILE_JSON);
  });

  it('round-trips the brotli writer', () => {
    const body = Buffer.from(
      JSON.stringify({ names: Array.from({ length: 300 }, (_, i) => `agent-${(i * 7919) % 1000}`) }),
    );
    const enc = encodeHcs1File(body, 'application/json', 500);
    expect(enc.messages.length).toBeGreaterThan(1);
    const chunks = new Map(
      enc.messages.map((m) => JSON.parse(m) as { o: number; c: string }).map((c) => [c.o, c.c] as const),
    );
    const file = assembleHcs1(parseHcs1Memo(enc.memo)!, chunks);
    expect(file.bytes.equals(body)).toBe(true);
  });

  it('refuses a hash mismatch, a missing chunk and an empty file', () => {
    const memo = { sha256: 'f'.repeat(64), compression: 'zstd' as const, encoding: 'base64' as const };
    expect(() => assembleHcs1(memo, chunksOf(ZSTD_PROFILE_B64, 50))).toThrow(/does not match the SHA-256/);
    const gap = chunksOf(ZSTD_PROFILE_B64, 50);
    gap.delete(1);
    expect(() => assembleHcs1(memo, gap)).toThrow(/missing chunk o=1/);
    expect(() => assembleHcs1(memo, new Map())).toThrow(Hcs1Error);
  });

  it('caps decompressed size for brotli and zstd bombs', () => {
    const zeros = Buffer.alloc(4_000_000);
    const brotli = brotliCompressSync(zeros).toString('base64');
    expect(() =>
      assembleHcs1({ sha256: sha(zeros), compression: 'brotli', encoding: 'base64' }, chunksOf(brotli, 1000), {
        maxBytes: 100_000,
      }),
    ).toThrow(/decompresses to more than 100000 bytes/);
    expect(() =>
      assembleHcs1({ sha256: sha(zeros), compression: 'zstd', encoding: 'base64' }, chunksOf(ZSTD_BOMB_B64, 1000), {
        maxBytes: 100_000,
      }),
    ).toThrow(/decompresses to more than 100000 bytes/);
    // Within the cap the same bomb decodes and verifies.
    expect(
      assembleHcs1({ sha256: sha(zeros), compression: 'zstd', encoding: 'base64' }, chunksOf(ZSTD_BOMB_B64, 1000), {
        maxBytes: 5_000_000,
      }).bytes.length,
    ).toBe(4_000_000);
  });

  it('refuses zstd frames that would allocate huge windows before decoding them', () => {
    // Magic, FHD 0 (no single segment), window descriptor 2^31, one raw last block of 1 byte.
    const huge = Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 21 << 3, 0x09, 0x00, 0x00, 0x41]);
    expect(zstdFramesProblem(huge, 8 << 20, 1 << 20)).toMatch(/window of 2147483648 bytes/);
    // Single segment declaring 4 GiB of content.
    const declared = Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 1, 0, 0, 0, 0x09, 0, 0, 0x41]);
    expect(zstdFramesProblem(declared, 8 << 20, 1 << 20)).toMatch(/too large/);
    expect(zstdFramesProblem(Buffer.from(ZSTD_PROFILE_B64, 'base64'), 8 << 20, 1 << 20)).toBeNull();
    expect(zstdFramesProblem(Uint8Array.from([1, 2, 3, 4, 5]), 8 << 20, 1 << 20)).toBe('no zstd frame');
    expect(() =>
      assembleHcs1(
        { sha256: 'a'.repeat(64), compression: 'zstd', encoding: 'base64' },
        new Map([[0, Buffer.from(huge).toString('base64')]]),
      ),
    ).toThrow(/not usable zstd data/);
  });
});

describe('readHcs1File', () => {
  let mirror: FakeMirror;
  let client: MirrorRestClient;
  beforeAll(async () => {
    mirror = await new FakeMirror().start();
    client = new MirrorRestClient({ baseUrl: mirror.url, minBackoffMs: 1 });
  });
  afterAll(async () => {
    await client.close();
    await mirror.stop();
  });

  const inscribe = (body: string, keys: { admin?: boolean; submit?: boolean } = {}): string => {
    const enc = encodeHcs1File(Buffer.from(body), 'application/json', 300);
    const topic = mirror.createTopic(enc.memo, keys);
    // Out of order, with junk a submit-key holder might have written in between.
    const msgs = [...enc.messages].reverse();
    mirror.submit(topic, 'not a chunk');
    for (const m of msgs) mirror.submit(topic, m);
    return topic;
  };

  it('reads a file from the mirror node in any message order, ignoring non-chunk messages', async () => {
    const body = JSON.stringify({ hello: 'world'.repeat(400) });
    const topic = inscribe(body);
    const file = await readHcs1File(client, topic);
    expect(file.bytes.toString()).toBe(body);
    expect(file.sha256).toBe(sha(body));
  });

  it('enforces the topic rules and reports unknown topics', async () => {
    await expect(readHcs1File(client, inscribe('{}', { admin: true }))).rejects.toThrow(/has an admin key/);
    await expect(readHcs1File(client, inscribe('{}', { submit: false }))).rejects.toThrow(/no submit key/);
    expect((await readHcs1File(client, inscribe('{}', { admin: true }), { requireKeys: false })).bytes.toString()).toBe(
      '{}',
    );
    await expect(readHcs1File(client, '0.0.424242')).rejects.toThrow(/does not exist/);
    const notHcs1 = mirror.createTopic('hcs-2:0:60');
    await expect(readHcs1File(client, notHcs1)).rejects.toThrow(/is not an HCS-1 file/);
  });

  it('stops reading a topic that is larger than the cap', async () => {
    const body = JSON.stringify({ big: Array.from({ length: 3000 }, (_, i) => `${i}-${Math.random()}`) });
    const topic = inscribe(body);
    await expect(readHcs1File(client, topic, { maxBytes: 2000 })).rejects.toThrow(/larger than 2000 bytes/);
  });

  it('stops reading a topic flooded with messages that add no characters', async () => {
    const body = JSON.stringify({ hello: 'world' });
    const enc = encodeHcs1File(Buffer.from(body), 'application/json');
    const topic = mirror.createTopic(enc.memo, { submit: true });
    for (let o = 1; o <= 1200; o++) mirror.submit(topic, o % 2 ? { o: o + 5, c: '' } : 'junk');
    for (const m of enc.messages) mirror.submit(topic, m);
    await expect(readHcs1File(client, topic, { maxBytes: 2000 })).rejects.toThrow(
      /spans more than 1000 messages, larger than/,
    );
    // The same file without the flood reads.
    const clean = mirror.createTopic(enc.memo, { submit: true });
    for (const m of enc.messages) mirror.submit(clean, m);
    expect((await readHcs1File(client, clean, { maxBytes: 2000 })).bytes.toString()).toBe(body);
  });
});
