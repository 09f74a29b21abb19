import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { aidOf, buildUaid, type UaidInput } from '../../src/discover/uaid.js';

interface Sdk {
  createUaid(data: unknown, params: unknown): Promise<string>;
}

const sdk = () => import('@hashgraphonline/standards-sdk') as Promise<unknown> as Promise<Sdk>;

const text = fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim().length > 0);
const host = fc.stringMatching(/^([a-z0-9][a-z0-9-]{0,20}\.){0,3}[a-z][a-z0-9-]{0,12}$/);
const http: fc.Arbitrary<UaidInput> = fc.record({
  name: text,
  protocol: fc.constantFrom('http', 'openai', 'mcp', 'a2a'),
  network: fc.constantFrom('mainnet', 'testnet', 'local'),
  endpoint: fc
    .tuple(fc.constantFrom('http', 'https'), host, fc.option(fc.integer({ min: 1, max: 65_535 }), { nil: undefined }))
    .map(([s, h, port]) => `${s}://${h}${port ? `:${port}` : ''}/v1`),
  version: fc.option(fc.constantFrom('1.0.0', ' 2.1 ', '0.0.1-beta'), { nil: undefined }),
  skills: fc.option(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 6 }), { nil: undefined }),
}) as fc.Arbitrary<UaidInput>;
const hcs10: fc.Arbitrary<UaidInput> = fc.record({
  name: text,
  protocol: fc.constantFrom('hcs-10', 'http'),
  network: fc.constantFrom('mainnet', 'testnet', 'previewnet', 'local', 'custom'),
  accountId: fc.nat({ max: 9_999_999 }).map((n) => `0.0.${n}`),
  inboundTopicId: fc.option(
    fc.nat({ max: 9_999_999 }).map((n) => `0.0.${n}`),
    { nil: undefined },
  ),
  skills: fc.option(fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 6 }), { nil: undefined }),
}) as fc.Arbitrary<UaidInput>;

describe('buildUaid', () => {
  it("equals the standards-sdk's createUaid for the same agent (HTTP and HCS-10 agents)", async () => {
    const { createUaid } = await sdk();
    await fc.assert(
      fc.asyncProperty(fc.oneof(http, hcs10), async (input) => {
        const { data, params } = aidOf(input);
        expect(await buildUaid(input)).toBe(await createUaid(data, params));
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a known UAID (pinned: a change would give every agent a new subject)', async () => {
    const uaid = await buildUaid({
      name: 'agent-1',
      protocol: 'openai',
      network: 'local',
      endpoint: 'http://a1.bench.invalid/v1',
    });
    const { data, params } = aidOf({
      name: 'agent-1',
      protocol: 'openai',
      network: 'local',
      endpoint: 'http://a1.bench.invalid/v1',
    });
    expect(uaid).toBe(await (await sdk()).createUaid(data, params));
    expect(uaid).toMatch(
      /^uaid:aid:[1-9A-HJ-NP-Za-km-z]{60,70};uid=0;registry=self;proto=openai;nativeId=a1\.bench\.invalid$/,
    );
  });

  it("rejects what the SDK's validation rejects (an empty name)", async () => {
    const input: UaidInput = { name: '', protocol: 'http', network: 'local', endpoint: 'http://x.invalid/' };
    const { data, params } = aidOf(input);
    await expect((await sdk()).createUaid(data, params)).rejects.toThrow();
    await expect(buildUaid(input)).rejects.toThrow();
  });
});
