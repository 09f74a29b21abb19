import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import type { MetadataFetch } from '../../src/discover/fetch-metadata.js';
import { openResolveContext, resolveDocument } from '../../src/discover/resolve.js';
import { FakeMirror } from './fake-mirror.js';

let mirror: FakeMirror;
let client: MirrorRestClient;

beforeAll(async () => {
  mirror = await new FakeMirror().start();
  client = new MirrorRestClient({ baseUrl: mirror.url, minBackoffMs: 1, maxBackoffMs: 5 });
});
afterAll(async () => {
  await client.close();
  await mirror.stop();
});

describe('resolveDocument cache', () => {
  it('keeps small documents, but not more than its byte budget of large ones', async () => {
    const fetched = new Map<string, number>();
    const big = JSON.stringify({ name: 'x', pad: 'p'.repeat(200_000) });
    const fetch: MetadataFetch = async (url) => {
      fetched.set(url, (fetched.get(url) ?? 0) + 1);
      const body = url.endsWith('/small') ? JSON.stringify({ name: 'small' }) : big;
      return { status: 200, contentType: 'application/json', body };
    };
    const { ctx } = openResolveContext({ mirror: client, fetch });
    // 120 distinct 200 KB documents (a hostile registry's distinct URLs): 24 MB if all were kept.
    for (let i = 0; i < 120; i++) await resolveDocument(`https://evil.example/${i}`, ctx);
    expect(ctx.cacheBytes).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect(ctx.cache.size).toBeLessThan(120);
    // Documents dropped from the cache are fetched again when asked for again; kept ones are not.
    await resolveDocument('https://evil.example/119', ctx);
    expect(fetched.get('https://evil.example/119')).toBe(2);
    await resolveDocument('https://evil.example/0', ctx);
    expect(fetched.get('https://evil.example/0')).toBe(1);
    // Small documents are still shared within the budget.
    await resolveDocument('https://evil.example/small', ctx);
    await resolveDocument('https://evil.example/small', ctx);
    expect(fetched.get('https://evil.example/small')).toBe(1);
  });
});
