import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeHcs1File } from '../../src/hedera/hcs1.js';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { loadAgentsFile, parseAgentsFile } from '../../src/discover/agents-file.js';
import { discoverRegistry } from '../../src/discover/discover.js';
import type { MetadataFetch } from '../../src/discover/fetch-metadata.js';
import { parseUaid } from '../../src/discover/uaid.js';
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

function inscribe(doc: unknown, options: { tamper?: boolean } = {}): string {
  const enc = encodeHcs1File(Buffer.from(JSON.stringify(doc)), 'application/json', 700);
  const memo = options.tamper ? `${'0'.repeat(64)}${enc.memo.slice(64)}` : enc.memo;
  const topic = mirror.createTopic(memo);
  for (const m of enc.messages) mirror.submit(topic, m);
  return topic;
}

function hcs10Account(
  accountId: string,
  profile: Record<string, unknown>,
  inboundOwner = accountId,
): { inbound: string } {
  const inbound = mirror.createTopic(`hcs-10:0:60:0:${inboundOwner}`);
  mirror.accounts.set(accountId, {
    memo: `hcs-11:hcs://1/${inscribe({ version: '1.0', type: 1, inboundTopicId: inbound, ...profile })}`,
  });
  return { inbound };
}

/** Stands in for the guarded fetch: serves documents by URL, nothing else. */
function fetchFrom(docs: Record<string, unknown>): MetadataFetch {
  return async (url) => {
    const doc = docs[url];
    return doc === undefined
      ? { status: 404, contentType: 'text/plain', body: 'nope' }
      : { status: 200, contentType: 'application/json', body: JSON.stringify(doc) };
  };
}

const card = (name: string, url: string) => ({
  name,
  url,
  version: '1.0.0',
  protocolVersion: '0.3.0',
  capabilities: {},
  skills: [],
  defaultInputModes: ['text'],
  defaultOutputModes: ['text'],
});

describe('discoverRegistry on an HCS-2 registry', () => {
  it('yields exactly the live agents from records, cards and profiles, with UAIDs', async () => {
    const reg = mirror.createTopic('hcs-2:0:86400');
    const put = (metadata: unknown, t_id = reg) =>
      mirror.submit(reg, { p: 'hcs-2', op: 'register', t_id, metadata })[0]!;
    const s1 = put({ name: 'calc', protocol: 'a2a', endpoint: 'http://127.0.0.1:4001' });
    const s2 = put(
      JSON.stringify({ name: 'old', protocol: 'openai', endpoint: 'http://127.0.0.1:4002/v1', model: 'm' }),
    );
    mirror.submit(reg, {
      p: 'hcs-2',
      op: 'update',
      uid: String(s2),
      metadata: JSON.stringify({ name: 'chat', protocol: 'openai', endpoint: 'http://127.0.0.1:4012/v1', model: 'm' }),
    });
    const s3 = put({ name: 'gone', protocol: 'http', endpoint: 'http://127.0.0.1:4003' });
    mirror.submit(reg, { p: 'hcs-2', op: 'delete', uid: String(s3) });
    // A chunked register (a long description pushes it past one 1024-byte chunk).
    const chunked = mirror.submit(reg, {
      p: 'hcs-2',
      op: 'register',
      t_id: reg,
      metadata: { name: 'chunky', protocol: 'http', endpoint: 'http://127.0.0.1:4004', description: 'd'.repeat(1500) },
    });
    expect(chunked).toHaveLength(2);
    const cardFile = inscribe(card('filed', 'http://127.0.0.1:4005/a2a'));
    const s5 = put(`hcs://1/${cardFile}`, cardFile);
    const s6 = put('https://cards.example.com/agent.json');
    const s7 = put(
      `data:application/json;base64,${Buffer.from(JSON.stringify({ name: 'datauri', protocol: 'mcp', endpoint: 'http://127.0.0.1:4007/mcp' })).toString('base64')}`,
    );
    const inbound = mirror.createTopic('hcs-10:0:60:0:0.0.3333');
    const profileFile = inscribe({
      version: '1.0',
      type: 1,
      display_name: 'profiled',
      inboundTopicId: inbound,
      aiAgent: { type: 1, capabilities: [0], model: 'x' },
    });
    const s8 = put(`hcs://1/${profileFile}`);
    const s9 = put({ name: 'calc again', protocol: 'a2a', endpoint: 'http://127.0.0.1:4001/' });
    const declared = 'uaid:aid:abc123;uid=0;registry=self;proto=a2a;nativeId=x.example.com';
    const s10 = put({ name: 'declared', protocol: 'a2a', endpoint: 'https://x.example.com', uaid: declared });

    const result = await discoverRegistry({
      registry: `hcs://2/${reg}`,
      mirror: client,
      network: 'local',
      fetch: fetchFrom({ 'https://cards.example.com/agent.json': card('fetched', 'https://cards.example.com/a2a') }),
    });
    // 13 mirror messages, one of them the second chunk of `chunky`.
    expect(result.registry).toEqual({ topicId: reg, kind: 'hcs-2', indexed: true, ttl: 86400, messages: 12 });
    const summary = result.agents.map((a) => [a.name, a.protocol, a.endpoint ?? a.inboundTopicId, a.registrySeq]);
    expect(summary).toEqual([
      ['calc', 'a2a', 'http://127.0.0.1:4001', s1],
      ['chat', 'openai', 'http://127.0.0.1:4012/v1', s2],
      ['chunky', 'http', 'http://127.0.0.1:4004', chunked[1]],
      ['filed', 'a2a', 'http://127.0.0.1:4005/a2a', s5],
      ['fetched', 'a2a', 'https://cards.example.com/a2a', s6],
      ['datauri', 'mcp', 'http://127.0.0.1:4007/mcp', s7],
      ['profiled', 'hcs-10', inbound, s8],
      ['declared', 'a2a', 'https://x.example.com', s10],
    ]);
    expect(result.skipped).toEqual([
      { ref: `hcs://2/${reg}#${s9}`, reason: `duplicate of hcs://2/${reg}#${s1} (calc again)` },
    ]);
    expect(result.agents.every((a) => a.source === `hcs://2/${reg}`)).toBe(true);
    expect(result.agents[1]!.model).toBe('m');
    expect(result.agents[6]).toMatchObject({ accountId: '0.0.3333', inboundTopicId: inbound });
    expect(result.agents[7]!.subject).toBe(declared);

    const calc = parseUaid(result.agents[0]!.subject);
    expect(calc).toMatchObject({
      target: 'aid',
      params: { uid: '0', registry: 'self', proto: 'a2a', nativeId: '127.0.0.1:4001' },
    });
    const chat = parseUaid(result.agents[1]!.subject);
    expect(chat.params.proto).toBe('openai');
    const profiled = parseUaid(result.agents[6]!.subject);
    expect(profiled.params).toEqual({
      uid: `${inbound}@0.0.3333`,
      registry: 'hol',
      proto: 'hcs-10',
      nativeId: 'hedera:devnet:0.0.3333',
    });
    // Deterministic: the same registry discovers to the same subjects.
    const again = await discoverRegistry({ registry: reg, mirror: client, network: 'local', fetch: fetchFrom({}) });
    expect(again.agents[0]!.subject).toBe(result.agents[0]!.subject);
  });

  it('reads only the latest register of a non-indexed registry, and follows one migrate', async () => {
    const solo = mirror.createTopic('hcs-2:1:60');
    mirror.submit(solo, {
      p: 'hcs-2',
      op: 'register',
      t_id: solo,
      metadata: { name: 'v1', protocol: 'a2a', endpoint: 'https://v1.example.com' },
    });
    mirror.submit(solo, {
      p: 'hcs-2',
      op: 'register',
      t_id: solo,
      metadata: { name: 'v2', protocol: 'a2a', endpoint: 'https://v2.example.com' },
    });
    const r1 = await discoverRegistry({ registry: solo, mirror: client, network: 'testnet', fetch: fetchFrom({}) });
    expect(r1.agents.map((a) => a.name)).toEqual(['v2']);

    const old = mirror.createTopic('hcs-2:0:60');
    const next = mirror.createTopic('hcs-2:0:60');
    const last = mirror.createTopic('hcs-2:0:60');
    mirror.submit(old, {
      p: 'hcs-2',
      op: 'register',
      t_id: old,
      metadata: { name: 'old', protocol: 'a2a', endpoint: 'https://old.example.com' },
    });
    mirror.submit(old, { p: 'hcs-2', op: 'migrate', t_id: next });
    mirror.submit(next, {
      p: 'hcs-2',
      op: 'register',
      t_id: next,
      metadata: { name: 'new', protocol: 'a2a', endpoint: 'https://new.example.com' },
    });
    mirror.submit(next, { p: 'hcs-2', op: 'migrate', t_id: last });
    mirror.submit(last, {
      p: 'hcs-2',
      op: 'register',
      t_id: last,
      metadata: { name: 'last', protocol: 'a2a', endpoint: 'https://last.example.com' },
    });
    const r2 = await discoverRegistry({ registry: old, mirror: client, network: 'testnet', fetch: fetchFrom({}) });
    expect(r2.registry.migratedTo).toBe(next);
    expect(r2.agents.map((a) => [a.name, a.source])).toEqual([['new', `hcs://2/${next}`]]);
    expect(r2.skipped).toEqual([{ ref: `hcs://2/${next}`, reason: `second migrate (to ${last}) not followed` }]);
  });

  it('refuses a topic that is missing or not a registry, unless told its kind', async () => {
    await expect(discoverRegistry({ registry: '0.0.987654', mirror: client, network: 'local' })).rejects.toMatchObject({
      code: 'REGISTRY_NOT_FOUND',
    });
    const plain = mirror.createTopic('just a topic');
    await expect(discoverRegistry({ registry: plain, mirror: client, network: 'local' })).rejects.toMatchObject({
      code: 'NOT_A_REGISTRY',
    });
    mirror.submit(plain, {
      p: 'hcs-2',
      op: 'register',
      t_id: plain,
      metadata: { name: 'k', protocol: 'a2a', endpoint: 'https://k.example.com' },
    });
    const r = await discoverRegistry({
      registry: plain,
      mirror: client,
      network: 'local',
      kind: 'hcs-2',
      fetch: fetchFrom({}),
    });
    expect(r.agents.map((a) => a.name)).toEqual(['k']);
    await expect(discoverRegistry({ registry: 'registry', mirror: client, network: 'local' })).rejects.toMatchObject({
      code: 'USAGE',
    });
  });
});

describe('discoverRegistry on an HCS-10 registry', () => {
  it('resolves accounts to profiles and inbound topics, with reasons for the rest', async () => {
    const reg = mirror.createTopic('hcs-10:0:60:3');
    const reg10 = (account_id: string, extra: Record<string, unknown> = {}) =>
      mirror.submit(reg, { p: 'hcs-10', op: 'register', account_id, ...extra })[0]!;
    const a = hcs10Account('0.0.7001', {
      display_name: 'Alpha',
      aiAgent: { type: 1, capabilities: [0, 17], model: 'alpha-1' },
    });
    const sa = reg10('0.0.7001');
    const b = hcs10Account('0.0.7002', { display_name: 'Beta', properties: { a2a: 'https://beta.example.com/a2a' } });
    const sb = reg10('0.0.7002', { inbound_topic_id: b.inbound });
    // No profile at all, but the registration names the inbound topic.
    mirror.accounts.set('0.0.7003', { memo: '' });
    const cInbound = mirror.createTopic('hcs-10:0:60:0:0.0.7003');
    const sc = reg10('0.0.7003', { inbound_topic_id: cInbound, metadata: { name: 'Gamma' } });
    // Profile through an HCS-2 topic.
    const profileTopic = mirror.createTopic('hcs-2:1:60');
    const dInbound = mirror.createTopic('hcs-10:0:60:0:0.0.7004');
    mirror.submit(profileTopic, {
      p: 'hcs-2',
      op: 'register',
      t_id: profileTopic,
      metadata: `hcs://1/${inscribe({ version: '1.0', type: 1, display_name: 'Delta', inboundTopicId: dInbound })}`,
    });
    mirror.accounts.set('0.0.7004', { memo: `hcs-11:hcs://2/${profileTopic}` });
    const sd = reg10('0.0.7004');
    // An inbound topic that belongs to someone else.
    hcs10Account('0.0.7005', { display_name: 'Impostor' }, '0.0.7001');
    const se = reg10('0.0.7005');
    const sf = reg10('0.0.7999'); // no such account
    mirror.accounts.set('0.0.7006', { memo: 'hcs-11:ipfs://bafyprofile' });
    const sg = reg10('0.0.7006');
    mirror.accounts.set('0.0.7007', { memo: 'hello' });
    const sh = reg10('0.0.7007');

    const result = await discoverRegistry({ registry: reg, mirror: client, network: 'testnet', fetch: fetchFrom({}) });
    expect(result.registry.kind).toBe('hcs-10');
    expect(
      result.agents.map((x) => [x.name, x.protocol, x.accountId, x.inboundTopicId, x.endpoint, x.registrySeq]),
    ).toEqual([
      ['Alpha', 'hcs-10', '0.0.7001', a.inbound, undefined, sa],
      ['Beta', 'a2a', '0.0.7002', b.inbound, 'https://beta.example.com/a2a', sb],
      ['Gamma', 'hcs-10', '0.0.7003', cInbound, undefined, sc],
      ['Delta', 'hcs-10', '0.0.7004', dInbound, undefined, sd],
    ]);
    expect(result.agents[0]!.model).toBe('alpha-1');
    const alpha = parseUaid(result.agents[0]!.subject);
    expect(alpha.params).toEqual({
      uid: `${a.inbound}@0.0.7001`,
      registry: 'hol',
      proto: 'hcs-10',
      nativeId: 'hedera:testnet:0.0.7001',
    });
    expect(Object.fromEntries(result.skipped.map((s) => [s.ref, s.reason]))).toEqual({
      [`hcs://2/${reg}#${se}`]: expect.stringMatching(
        /^inbound topic 0\.0\.\d+ belongs to 0\.0\.7001, not 0\.0\.7005$/,
      ),
      [`hcs://2/${reg}#${sf}`]: 'account 0.0.7999 does not exist',
      [`hcs://2/${reg}#${sg}`]: expect.stringContaining('needs an IPFS gateway'),
      [`hcs://2/${reg}#${sh}`]: 'account 0.0.7007 has no HCS-11 profile and its registration names no inbound topic',
    });
    // With endpoint hints off, Beta is reached over HCS-10 too.
    const strict = await discoverRegistry({
      registry: reg,
      mirror: client,
      network: 'testnet',
      fetch: fetchFrom({}),
      preferEndpointHints: false,
    });
    expect(strict.agents[1]).toMatchObject({ name: 'Beta', protocol: 'hcs-10' });
    expect(strict.agents[1]).not.toHaveProperty('endpoint');
  });
});

describe('a hostile registry', () => {
  it('gives reasons, never crashes, and keeps memory and the report bounded', async () => {
    const reg = mirror.createTopic('hcs-2:0:60');
    const t = mirror.topic(reg);
    const raw = (s: string) => mirror.push(t, reg, Buffer.from(s), '0.0.66', null);
    const good = mirror.submit(reg, {
      p: 'hcs-2',
      op: 'register',
      t_id: reg,
      metadata: { name: 'survivor', protocol: 'a2a', endpoint: 'https://ok.example.com' },
    })[0];
    const refs: Record<string, number> = {};
    refs.json = raw('{"p":"hcs-2","op":"register",');
    refs.p = raw(JSON.stringify({ p: 'hcs-20', op: 'register', t_id: reg }));
    refs.op = raw(JSON.stringify({ p: 'hcs-2', op: 'nuke' }));
    refs.big = mirror
      .submit(reg, {
        p: 'hcs-2',
        op: 'register',
        t_id: reg,
        metadata: { name: 'x', protocol: 'a2a', endpoint: 'https://b.example.com', pad: 'p'.repeat(12_000) },
      })
      .at(-1)!;
    const tampered = inscribe(card('tampered', 'https://t.example.com'), { tamper: true });
    refs.hash = mirror.submit(reg, { p: 'hcs-2', op: 'register', t_id: tampered, metadata: `hcs://1/${tampered}` })[0]!;
    const selfish = mirror.createTopic('hcs-2:1:60');
    mirror.submit(selfish, { p: 'hcs-2', op: 'register', t_id: selfish, metadata: `hcs://2/${selfish}` });
    mirror.accounts.set('0.0.8001', { memo: `hcs-11:hcs://2/${selfish}` });
    refs.self = mirror.submit(reg, { p: 'hcs-2', op: 'register', t_id: selfish, metadata: `hcs://2/${selfish}` })[0]!;
    refs.private = mirror.submit(reg, {
      p: 'hcs-2',
      op: 'register',
      t_id: reg,
      metadata: 'http://169.254.169.254/latest/meta-data',
    })[0]!;
    refs.unknown = mirror.submit(reg, { p: 'hcs-2', op: 'register', t_id: reg, metadata: { hello: 'world' } })[0]!;
    refs.chunk = mirror.push(t, reg, Buffer.from('half'), '0.0.66', {
      initial_transaction_id: { account_id: '0.0.66', nonce: 0, scheduled: false, transaction_valid_start: '1.0' },
      number: 1,
      total: 5,
    });
    for (let i = 0; i < 10_000; i++)
      raw(i % 3 === 0 ? `junk ${i}` : i % 3 === 1 ? '{"p":"hcs-2","op":"delete","uid":"424242"}' : '\u0000\u00ff');

    const before = process.memoryUsage().heapUsed;
    const result = await discoverRegistry({ registry: reg, mirror: client, network: 'local', maxSkipped: 2000 });
    const grown = process.memoryUsage().heapUsed - before;
    expect(result.agents.map((a) => [a.name, a.registrySeq])).toEqual([['survivor', good]]);
    const reasons = new Map(result.skipped.map((s) => [s.ref, s.reason]));
    const ref = (k: string) => `hcs://2/${reg}#${refs[k]}`;
    expect(reasons.get(ref('json'))).toMatch(/^invalid JSON/);
    expect(reasons.get(ref('p'))).toBe('wrong protocol: p is "hcs-20", expected "hcs-2"');
    expect(reasons.get(ref('op'))).toBe('unknown op "nuke"');
    expect(reasons.get(ref('big'))).toMatch(/^metadata is \d+ bytes; the limit is 8192$/);
    expect(reasons.get(ref('hash'))).toMatch(/does not match the SHA-256 in its memo/);
    expect(reasons.get(ref('self'))).toBe(`reference cycle: hcs://2/${selfish} → hcs://2/${selfish}`);
    expect(reasons.get(ref('private'))).toMatch(/169\.254\.169\.254/);
    expect(reasons.get(ref('unknown'))).toMatch(/^document is not an agent record/);
    expect(reasons.get(ref('chunk'))).toMatch(/chunk of an incomplete message \(1\/5\)/);
    expect(result.registry.messages).toBe(10_009);
    // 2000 folding reasons + 4 resolution reasons (hash, self, private, unknown) + one overflow note.
    expect(result.skipped).toHaveLength(2005);
    expect(result.skipped.at(-1)).toEqual({
      ref: '(more)',
      reason: '8005 more entries were skipped; only the first 2000 are listed',
    });
    expect(grown).toBeLessThan(200 * 1024 * 1024);

    // The self-referencing profile, reached through an HCS-10 account, is a reason too.
    const reg10 = mirror.createTopic('hcs-10:0:60:3');
    mirror.submit(reg10, { p: 'hcs-10', op: 'register', account_id: '0.0.8001' });
    const r10 = await discoverRegistry({ registry: reg10, mirror: client, network: 'local', fetch: fetchFrom({}) });
    expect(r10.agents).toEqual([]);
    expect(r10.skipped[0]!.reason).toContain('reference cycle');
  });
});

describe('a failing mirror node', () => {
  it('ends discovery with the mirror error instead of skipping every entry', async () => {
    const reg = mirror.createTopic('hcs-2:0:60');
    const files: string[] = [];
    for (let i = 0; i < 40; i++) {
      const file = inscribe(card(`c${i}`, `https://c${i}.example.com`));
      files.push(file);
      mirror.submit(reg, { p: 'hcs-2', op: 'register', t_id: file, metadata: `hcs://1/${file}` });
    }
    const impatient = new MirrorRestClient({ baseUrl: mirror.url, retries: 1, minBackoffMs: 1, maxBackoffMs: 2 });
    // Everything but the registry itself fails: the fold works, every resolution hits the outage.
    mirror.failing = new RegExp(`^/api/v1/topics/(?!${reg.replace(/\./g, '\\.')}(/|$))`);
    const before = mirror.requests.length;
    try {
      await expect(
        discoverRegistry({ registry: reg, mirror: impatient, network: 'local', fetch: fetchFrom({}), concurrency: 4 }),
      ).rejects.toMatchObject({ code: 'MIRROR_UNAVAILABLE' });
      // Discovery stops at the outage: only the entries already in flight were tried, not all 40.
      const tried = new Set(
        mirror.requests.slice(before).flatMap((r) => files.filter((f) => r.endsWith(`/topics/${f}`))),
      );
      expect(tried.size).toBeGreaterThan(0);
      expect(tried.size).toBeLessThanOrEqual(8);
    } finally {
      mirror.failing = undefined;
      await impatient.close();
    }
  });
});

describe('agents file', () => {
  it('validates each record, completes HCS-10 ones and dedupes', async () => {
    const inbound = mirror.createTopic('hcs-10:0:60:0:0.0.9100');
    mirror.accounts.set('0.0.9100', {
      memo: `hcs-11:hcs://1/${inscribe({ version: '1.0', type: 1, display_name: 'Filed', inboundTopicId: inbound })}`,
    });
    const dir = await mkdtemp(join(tmpdir(), 'hcs25-agents-'));
    const file = join(dir, 'agents.json');
    await writeFile(
      file,
      JSON.stringify([
        { name: 'one', protocol: 'a2a', endpoint: 'http://127.0.0.1:5001' },
        { name: 'two', protocol: 'smtp', endpoint: 'http://127.0.0.1:5002' },
        { name: 'hcs', protocol: 'hcs-10', accountId: '0.0.9100' },
        { name: 'one again', protocol: 'a2a', endpoint: 'http://127.0.0.1:5001' },
      ]),
    );
    const { agents, skipped } = await loadAgentsFile(file, { mirror: client, network: 'local', fetch: fetchFrom({}) });
    expect(agents.map((a) => [a.name, a.protocol, a.inboundTopicId])).toEqual([
      ['one', 'a2a', undefined],
      ['hcs', 'hcs-10', inbound],
    ]);
    expect(skipped).toEqual([
      { ref: 'agents.json#1', reason: expect.stringMatching(/^invalid agent record: protocol/) },
      { ref: 'agents.json#3', reason: 'duplicate of agents.json#0 (one again)' },
    ]);
    expect(parseAgentsFile('{"agents":[]}', 'x.json').records).toEqual([]);
    expect(() => parseAgentsFile('{"nope":1}', 'x.json')).toThrow(/must be a JSON list/);
    // JSON lines, as `hcs25 agents > agents.jsonl` writes them (one record, or several).
    const a = { name: 'a', protocol: 'openai', endpoint: 'http://127.0.0.1:1/' };
    const b = { name: 'b', protocol: 'http', endpoint: 'http://127.0.0.1:2/' };
    expect(
      parseAgentsFile(`${JSON.stringify(a)}\n${JSON.stringify(b)}\n`, 'x.jsonl').records.map((r) => r.doc),
    ).toEqual([a, b]);
    expect(parseAgentsFile(`${JSON.stringify(a)}\n`, 'x.jsonl').records.map((r) => r.doc)).toEqual([a]);
    expect(() => parseAgentsFile(`${JSON.stringify(a)}\n{oops\n`, 'x.jsonl')).toThrow(
      /x\.jsonl is neither JSON nor JSON lines: line 2/,
    );
    await expect(loadAgentsFile(join(dir, 'missing.json'), { mirror: client, network: 'local' })).rejects.toMatchObject(
      { code: 'USAGE' },
    );
    await rm(dir, { recursive: true });
  });
});
