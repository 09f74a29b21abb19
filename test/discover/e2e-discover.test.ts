/**
 * Discovery end to end against the embedded emulator: registries written with the Hedera SDK, read back through
 * the emulator's mirror REST API by the real mirror client, HCS-1 reader and guarded fetch.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeHcs1File } from '../../src/hedera/hcs1.js';
import { inscribeHcs1 } from '../../src/hedera/hcs1-write.js';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { discoverRegistry } from '../../src/discover/discover.js';
import { parseUaid } from '../../src/discover/uaid.js';
import { startWriter, type Writer } from './emulator.js';

/** `zstd -19` of ZSTD_RECORD_JSON (zstd CLI; node 20 has no zstd compressor). */
const ZSTD_RECORD_B64 =
  'KLUv/WQNBu0DAEJIGhiAbQNAJfc2App8y74gc8Xbsj2CCnJhpjTVasARbJQAGGXRbtpQH8/JMkru9LH0n/qkO5aqnSzbdvgRSjf57VpoNgFBEIMRQ3AUhCCwb+jxNe/a+P8s28idv8u4a7/ZacD7OS1bllovFQUAycn1O25ItQpXzoEIlc09oTLXPg==';
const ZSTD_RECORD_JSON = JSON.stringify({
  name: 'zstd-agent',
  protocol: 'http',
  endpoint: 'http://127.0.0.1:4999/ask',
  description: 'An agent record stored zstd-compressed in an HCS-1 file. '.repeat(30),
});

let w: Writer;
let mirror: MirrorRestClient;
let cards: Server;
let cardBase = '';

beforeAll(async () => {
  w = await startWriter();
  mirror = new MirrorRestClient({ baseUrl: w.mirrorRestUrl });
  cards = createServer((req, res) => {
    if (req.url === '/.well-known/agent-card.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          name: 'card-agent',
          url: `${cardBase}/a2a`,
          version: '1.0.0',
          protocolVersion: '0.3.0',
          capabilities: {},
          skills: [],
          defaultInputModes: ['text'],
          defaultOutputModes: ['text'],
        }),
      );
    } else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => cards.listen(0, '127.0.0.1', resolve));
  cardBase = `http://127.0.0.1:${(cards.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await mirror?.close();
  cards?.closeAllConnections();
  await new Promise<void>((resolve) => (cards ? cards.close(() => resolve()) : resolve()));
  await w?.stop();
});

/** An HCS-1 file written by hand, so its memo and bytes can be anything. */
async function hcs1(memo: string, base64: string, mime = 'application/json'): Promise<string> {
  const topic = await w.createTopic(memo, { submit: true });
  const text = `data:${mime};base64,${base64}`;
  for (let o = 0; o * 900 < text.length; o++) await w.submit(topic, { o, c: text.slice(o * 900, (o + 1) * 900) });
  return topic;
}

describe('discovery against the emulator', () => {
  it('an HCS-2 registry with every kind of entry yields exactly the live agents', async () => {
    const reg = await w.createTopic('hcs-2:0:86400');
    const put = (metadata: unknown, t_id = reg) => w.submit(reg, { p: 'hcs-2', op: 'register', t_id, metadata });

    const sRecord = await put(
      JSON.stringify({ name: 'record-agent', protocol: 'a2a', endpoint: 'http://127.0.0.1:4001/a2a' }),
    );
    const sUpdated = await put(
      JSON.stringify({ name: 'before-update', protocol: 'openai', endpoint: 'http://127.0.0.1:4002/v1' }),
    );
    await w.submit(reg, {
      p: 'hcs-2',
      op: 'update',
      uid: String(sUpdated),
      t_id: reg,
      metadata: JSON.stringify({
        name: 'after-update',
        protocol: 'openai',
        endpoint: 'http://127.0.0.1:4012/v1',
        model: 'local-model',
      }),
    });
    const sDeleted = await put(
      JSON.stringify({ name: 'deleted-agent', protocol: 'http', endpoint: 'http://127.0.0.1:4003' }),
    );
    await w.submit(reg, { p: 'hcs-2', op: 'delete', uid: String(sDeleted) });
    // Over 1024 bytes: the SDK sends it as two chunks; the mirror client joins them.
    const sChunked = await put({
      name: 'chunked-agent',
      protocol: 'http',
      endpoint: 'http://127.0.0.1:4004/ask',
      description: 'c'.repeat(1400),
    });
    const brotliFile = await inscribeHcs1(
      w.client,
      Buffer.from(
        JSON.stringify({
          name: 'brotli-agent',
          protocol: 'mcp',
          endpoint: 'http://127.0.0.1:4005/mcp',
          description: 'b'.repeat(3000),
        }),
      ),
      { mimeType: 'application/json' },
    );
    expect(brotliFile.chunks).toBeGreaterThanOrEqual(1);
    const sBrotli = await put(brotliFile.hrl, brotliFile.topicId);
    const zstdFile = await hcs1(
      `${createHash('sha256').update(ZSTD_RECORD_JSON).digest('hex')}:zstd:base64`,
      ZSTD_RECORD_B64,
    );
    const sZstd = await put(`hcs://1/${zstdFile}`, zstdFile);
    const account = await w.createAccount('');
    const inbound = await w.createTopic(`hcs-10:0:60:0:${account}`);
    const profile = await inscribeHcs1(
      w.client,
      Buffer.from(
        JSON.stringify({
          version: '1.0',
          type: 1,
          display_name: 'profile-agent',
          inboundTopicId: inbound,
          aiAgent: { type: 1, capabilities: [0, 17], model: 'm' },
        }),
      ),
      { mimeType: 'application/json' },
    );
    const sProfile = await put(profile.hrl, profile.topicId);
    const sCard = await put(`${cardBase}/.well-known/agent-card.json`);

    const result = await discoverRegistry({ registry: reg, mirror, network: 'local', allowPrivateEndpoints: true });
    expect(result.skipped).toEqual([]);
    expect(result.agents.map((a) => [a.name, a.protocol, a.endpoint ?? a.inboundTopicId, a.registrySeq])).toEqual([
      ['record-agent', 'a2a', 'http://127.0.0.1:4001/a2a', sRecord],
      ['after-update', 'openai', 'http://127.0.0.1:4012/v1', sUpdated],
      ['chunked-agent', 'http', 'http://127.0.0.1:4004/ask', sChunked],
      ['brotli-agent', 'mcp', 'http://127.0.0.1:4005/mcp', sBrotli],
      ['zstd-agent', 'http', 'http://127.0.0.1:4999/ask', sZstd],
      ['profile-agent', 'hcs-10', inbound, sProfile],
      ['card-agent', 'a2a', `${cardBase}/a2a`, sCard],
    ]);
    expect(result.agents[5]!.accountId).toBe(account);
    expect(parseUaid(result.agents[5]!.subject).params.nativeId).toBe(`hedera:devnet:${account}`);
    expect(new Set(result.agents.map((a) => a.subject)).size).toBe(7);

    // Without permission to reach loopback, the card is a reason, not an agent.
    const guarded = await discoverRegistry({ registry: reg, mirror, network: 'local', allowPrivateEndpoints: false });
    expect(guarded.agents.map((a) => a.name)).not.toContain('card-agent');
    expect(guarded.skipped).toEqual([{ ref: `hcs://2/${reg}#${sCard}`, reason: expect.stringContaining('127.0.0.1') }]);
  });

  it('an HCS-10 registry resolves accounts through HCS-11 profiles', async () => {
    const { AccountUpdateTransaction } = await import('@hashgraph/sdk');
    /** An agent account whose HCS-11 profile names an inbound topic that names the account back. */
    const agent = async (name: string): Promise<{ account: string; inbound: string; profileHrl: string }> => {
      const account = await w.createAccount('');
      const inbound = await w.createTopic(`hcs-10:0:60:0:${account}`);
      const profile = await inscribeHcs1(
        w.client,
        Buffer.from(
          JSON.stringify({
            version: '1.0',
            type: 1,
            display_name: name,
            inboundTopicId: inbound,
            aiAgent: { type: 1, capabilities: [0], model: 'm' },
          }),
        ),
        { mimeType: 'application/json' },
      );
      await (
        await new AccountUpdateTransaction()
          .setAccountId(account)
          .setAccountMemo(`hcs-11:${profile.hrl}`)
          .execute(w.client)
      ).getReceipt(w.client);
      return { account, inbound, profileHrl: profile.hrl };
    };
    const reg = await w.createTopic('hcs-10:0:60:3');
    const alpha = await agent('alpha');
    const sAlpha = await w.submit(reg, {
      p: 'hcs-10',
      op: 'register',
      account_id: alpha.account,
      m: 'Registering AI agent.',
    });
    const gone = await agent('gone');
    const sGone = await w.submit(reg, {
      p: 'hcs-10',
      op: 'register',
      account_id: gone.account,
      inbound_topic_id: gone.inbound,
    });
    await w.submit(reg, { p: 'hcs-10', op: 'delete', uid: String(sGone) });
    // An account whose memo borrows alpha's profile: alpha's inbound topic does not name it.
    const impostor = await w.createAccount(`hcs-11:${alpha.profileHrl}`);
    const sImpostor = await w.submit(reg, { p: 'hcs-10', op: 'register', account_id: impostor });
    // No profile at all; the registration (SDK shape) names the inbound topic.
    const bare = await w.createAccount('');
    const bareInbound = await w.createTopic(`hcs-10:0:60:0:${bare}`);
    const sBare = await w.submit(reg, {
      p: 'hcs-10',
      op: 'register',
      account_id: bare,
      inbound_topic_id: bareInbound,
      metadata: { name: 'bare' },
    });

    const result = await discoverRegistry({ registry: reg, mirror, network: 'local' });
    expect(result.registry.kind).toBe('hcs-10');
    expect(result.agents.map((a) => [a.name, a.protocol, a.accountId, a.inboundTopicId, a.registrySeq])).toEqual([
      ['alpha', 'hcs-10', alpha.account, alpha.inbound, sAlpha],
      ['bare', 'hcs-10', bare, bareInbound, sBare],
    ]);
    expect(result.skipped).toEqual([
      {
        ref: `hcs://2/${reg}#${sImpostor}`,
        reason: `inbound topic ${alpha.inbound} belongs to ${alpha.account}, not ${impostor}`,
      },
    ]);
    const uaid = parseUaid(result.agents[0]!.subject);
    expect(uaid.params).toEqual({
      uid: `${alpha.inbound}@${alpha.account}`,
      registry: 'hol',
      proto: 'hcs-10',
      nativeId: `hedera:devnet:${alpha.account}`,
    });
  });

  it('a hostile registry produces reasons, not a crash or a hang, with 10,000 junk messages', async () => {
    const reg = await w.createTopic('hcs-2:0:60');
    const sGood = await w.submit(reg, {
      p: 'hcs-2',
      op: 'register',
      t_id: reg,
      metadata: JSON.stringify({ name: 'survivor', protocol: 'a2a', endpoint: 'https://survivor.example.com' }),
    });
    const sJson = await w.submit(reg, '{"p":"hcs-2","op":"register","metadata":');
    const sP = await w.submit(reg, { p: 'hcs-20', op: 'register', t_id: reg });
    const sOp = await w.submit(reg, { p: 'hcs-2', op: 'explode' });
    const sBig = await w.submit(reg, {
      p: 'hcs-2',
      op: 'register',
      t_id: reg,
      metadata: JSON.stringify({
        name: 'big',
        protocol: 'a2a',
        endpoint: 'https://big.example.com',
        pad: 'x'.repeat(12_000),
      }),
    });
    const enc = encodeHcs1File(
      Buffer.from(JSON.stringify({ name: 'tampered', protocol: 'a2a', endpoint: 'https://t.example.com' })),
      'application/json',
    );
    const wrongHash = await hcs1(
      `${'1'.repeat(64)}:brotli:base64`,
      JSON.parse(enc.messages[0]!).c.replace(/^data:[^,]*,/, ''),
    );
    const sHash = await w.submit(reg, {
      p: 'hcs-2',
      op: 'register',
      t_id: wrongHash,
      metadata: `hcs://1/${wrongHash}`,
    });
    const selfTopic = await w.createTopic('hcs-2:1:60');
    await w.submit(selfTopic, { p: 'hcs-2', op: 'register', t_id: selfTopic, metadata: `hcs://2/${selfTopic}` });
    const sSelf = await w.submit(reg, {
      p: 'hcs-2',
      op: 'register',
      t_id: selfTopic,
      metadata: `hcs://2/${selfTopic}`,
    });
    await w.flood(
      reg,
      (function* () {
        for (let i = 0; i < 10_000; i++)
          yield i % 2 ? `junk ${i}` : { p: 'hcs-2', op: 'delete', uid: String(1_000_000 + i) };
      })(),
    );
    const sLast = await w.submit(reg, {
      p: 'hcs-2',
      op: 'register',
      t_id: reg,
      metadata: JSON.stringify({ name: 'late', protocol: 'http', endpoint: 'https://late.example.com' }),
    });

    const before = process.memoryUsage().heapUsed;
    const result = await discoverRegistry({ registry: reg, mirror, network: 'local', maxSkipped: 500 });
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(200 * 1024 * 1024);
    expect(result.registry.messages).toBe(10_008);
    expect(result.agents.map((a) => [a.name, a.registrySeq])).toEqual([
      ['survivor', sGood],
      ['late', sLast],
    ]);
    const reason = new Map(result.skipped.map((s) => [s.ref, s.reason]));
    const at = (seq: number) => reason.get(`hcs://2/${reg}#${seq}`);
    expect(at(sJson)).toMatch(/^invalid JSON/);
    expect(at(sP)).toBe('wrong protocol: p is "hcs-20", expected "hcs-2"');
    expect(at(sOp)).toBe('unknown op "explode"');
    expect(at(sBig)).toMatch(/^metadata is \d+ bytes; the limit is 8192$/);
    expect(at(sHash)).toMatch(/does not match the SHA-256 in its memo/);
    expect(at(sSelf)).toBe(`reference cycle: hcs://2/${selfTopic} → hcs://2/${selfTopic}`);
    expect(result.skipped.at(-1)).toEqual({
      ref: '(more)',
      reason: expect.stringMatching(/^\d+ more entries were skipped/),
    });
    expect(result.skipped.length).toBeLessThanOrEqual(500 + 3 + 1);
    // 10,000 submissions through the SDK are CPU-bound: with other files running beside it on two cores, give it room.
  }, 120_000);
});
