/**
 * Badges and ledger links over a real store (embedded PGlite, in memory): Shields endpoint JSON and flat SVG badges
 * with their values, colours, escaping, cache headers and ETags, served from the score cache; signal and run rows
 * linking to their messages on HashScan and the mirror node, per network; the live page's runs and links.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORK_PRESETS } from '../../src/config/networks.js';
import { buildRevealMessageV2 } from '../../src/format/write.js';
import type { ReadSignal } from '../../src/read/types.js';
import { BADGE_COLORS, badgeColor, badgeFor, badgeNumber, badgeSvg } from '../../src/report/badge.js';
import { verdictWords } from '../../src/report/html-ledger.js';
import { computeScores, type SubjectScore } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import { ScoreCache } from '../../src/serve/cache.js';
import { ServeEvents } from '../../src/serve/events.js';
import { startHttpServer, type ServeHttp } from '../../src/serve/http.js';
import { livePage } from '../../src/serve/live.js';
import { openStore, type ServeStore } from '../../src/serve/store/index.js';
import { HOUR, T0, evalSignal, probe, runId, uaid } from '../support/signals.js';
import { batchOf, toMessages } from './helpers.js';
import { openapiValidator } from './openapi.js';

const TOPIC = '0.0.4343';
const NOW = new Date(T0 + 5 * HOUR);
const RUNS = 4;
// MCP subjects are scored on availability alone, so their score is their reachable share.
const MCP = {
  always: uaid('always.mcp.dev', 'mcp'),
  mostly: uaid('mostly.mcp.dev', 'mcp'),
  half: uaid('half.mcp.dev', 'mcp'),
  rarely: uaid('rarely.mcp.dev', 'mcp'),
  never: uaid('never.mcp.dev', 'mcp'),
};
// The availability adapter does not apply to model catalogs.
const CATALOG = uaid('some-model', 'a2a', 'openrouter');
const LOCAL_MIRROR = 'http://127.0.0.1:5551';

function fleet(): ReadSignal[] {
  const reachable: Record<string, (r: number) => boolean> = {
    [MCP.always]: () => true,
    [MCP.mostly]: (r) => r !== 0,
    [MCP.half]: (r) => r % 2 === 0,
    [MCP.rarely]: (r) => r === 0,
    [MCP.never]: () => false,
    [CATALOG]: () => true,
  };
  const out: ReadSignal[] = [];
  let seq = 1;
  for (let r = 0; r < RUNS; r++) {
    for (const [i, subject] of Object.keys(reachable).entries()) {
      const at = T0 + r * HOUR + i * 1000;
      out.push(probe(subject, { seq: seq++, at, run: r, reachable: reachable[subject]!(r) }));
      if (subject === CATALOG) out.push(evalSignal(subject, 'math', 'correct', { seq: seq++, at: at + 100, run: r }));
    }
  }
  return out;
}

const signals = fleet();
const LAST = signals[signals.length - 1]!.sequenceNumber;
/** The reveal of run 0, the message after the signals. */
const REVEAL_SEQ = LAST + 1;

const check = openapiValidator();
const enc = encodeURIComponent;

let dir: string;
let store: ServeStore;
let events: ServeEvents;
let local: ServeHttp;
let testnet: ServeHttp;
/** Questions the servers asked the store (the change polls aside). */
let asked = 0;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hcs25-serve-badges-'));
  store = await openStore('memory://', { stateDir: dir });
  await store.applyBatch(TOPIC, {
    signals,
    records: [],
    unknown: [],
    rejected: [],
    cursor: { sequence: LAST, consensusTimestamp: signals[signals.length - 1]!.consensusTimestamp },
    source: 'rest',
  });
  const reveal = buildRevealMessageV2({
    run: runId(0),
    key: Buffer.alloc(32, 7).toString('base64url'),
    seed: 's',
    generator: 'simple@1',
    grader: 'first-token@1',
  });
  await store.applyBatch(TOPIC, batchOf(toMessages([Buffer.from(reveal.json)], REVEAL_SEQ)));
  while ((await store.rescoreDirty({ now: NOW })).more);
  // What the servers see: the store, counting every question but the change polls every instance makes.
  const polls = new Set<PropertyKey>(['revision', 'watch', 'changesSince']);
  const counted = new Proxy(store, {
    get(target, key) {
      const value = Reflect.get(target, key) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (!polls.has(key)) asked++;
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  events = new ServeEvents({ store: counted, scores: new ScoreCache(counted), maxClients: 2, pollMs: 50 });
  events.start();
  // Filled from the store before any test counts its questions.
  await events.warmed;
  const start = (network: { ledger: string; mirrorRestUrl: string }) =>
    startHttpServer({
      store: counted,
      events,
      topics: [TOPIC],
      publishers: [],
      scoring: DEFAULT_SCORING_CONFIG,
      live: livePage({ store, scoring: DEFAULT_SCORING_CONFIG, publishers: [], revision: () => events.revision() }),
      network,
      port: 0,
      limits: { requestsPerSecond: 0 },
      onError: (err) => console.error(err),
    });
  local = await start({ ledger: 'local', mirrorRestUrl: `${LOCAL_MIRROR}/` });
  testnet = await start(NETWORK_PRESETS.testnet);
});

afterAll(async () => {
  await local?.close();
  await testnet?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function json(base: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, { headers });
  const text = await res.text();
  return { res, text, body: res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text };
}

const mirrorOf = (base: string, seq: number) => `${base}/api/v1/topics/${TOPIC}/messages/${seq}`;

describe('links to the ledger', () => {
  it('each signal row links to its message: the mirror node always, HashScan on a public network', async () => {
    const subject = MCP.mostly;
    const mine = signals.filter((s) => s.message.subject === subject);
    for (const [server, hashscan, mirror] of [
      [local, () => null, LOCAL_MIRROR],
      [
        testnet,
        (s: ReadSignal) => `https://hashscan.io/testnet/transaction/${s.consensusTimestamp}`,
        NETWORK_PRESETS.testnet.mirrorRestUrl,
      ],
    ] as const) {
      const { res, body } = await json(server.url, `/v1/subjects/${enc(subject)}/signals`);
      check('/v1/subjects/{subject}/signals', res.status, body);
      const rows = body.signals as Array<ReadSignal & { links: unknown }>;
      expect(rows).toHaveLength(mine.length);
      for (const row of rows) {
        const signal = mine.find((s) => s.sequenceNumber === row.sequenceNumber)!;
        expect(row.links).toEqual({ hashscan: hashscan(signal), mirror: mirrorOf(mirror, signal.sequenceNumber) });
      }
    }
  });

  it('a revealed run links to its reveal message; a run not revealed has no links', async () => {
    const local0 = await json(local.url, '/v1/runs');
    check('/v1/runs', local0.res.status, local0.body);
    const runs = local0.body.runs as Array<{ run: string; revealed: boolean; links: unknown }>;
    expect(runs.map((r) => r.run)).toEqual(Array.from({ length: RUNS }, (_, r) => runId(r)));
    expect(runs.map((r) => r.revealed)).toEqual([true, false, false, false]);
    expect(runs[0]!.links).toEqual({ hashscan: null, mirror: mirrorOf(LOCAL_MIRROR, REVEAL_SEQ) });
    expect(runs.slice(1).map((r) => r.links)).toEqual([null, null, null]);
    const pub = await json(testnet.url, '/v1/runs');
    check('/v1/runs', pub.res.status, pub.body);
    const revealAt = toMessages([Buffer.alloc(0)], REVEAL_SEQ)[0]!.consensusTimestamp;
    expect(pub.body.runs[0].links).toEqual({
      hashscan: `https://hashscan.io/testnet/transaction/${revealAt}`,
      mirror: mirrorOf(NETWORK_PRESETS.testnet.mirrorRestUrl, REVEAL_SEQ),
    });
  });

  it('the live page links each signal and lists the newest runs with their reveal and verification in words', async () => {
    const page = livePage({
      store,
      scoring: DEFAULT_SCORING_CONFIG,
      publishers: [],
      network: 'testnet',
      mirrorRestUrl: NETWORK_PRESETS.testnet.mirrorRestUrl,
      revision: async () => Math.random(),
    });
    const first = signals[0]!;
    const html = await page.page(TOPIC);
    expect(html).toContain(`href="https://hashscan.io/testnet/transaction/${first.consensusTimestamp}"`);
    expect(html).toContain(`href="${mirrorOf(NETWORK_PRESETS.testnet.mirrorRestUrl, first.sequenceNumber)}"`);
    const rows = [...html.matchAll(/<tr class="runrow">(.*?)<\/tr>/g)].map((m) => m[1]!);
    // Newest first.
    expect(rows.map((r) => /<code>([^<]+)<\/code>/.exec(r)![1])).toEqual(
      Array.from({ length: RUNS }, (_, r) => runId(RUNS - 1 - r)),
    );
    expect(rows[RUNS - 1]).toContain(`yes <span class="muted">(`);
    expect(rows[RUNS - 1]).toContain(`href="${mirrorOf(NETWORK_PRESETS.testnet.mirrorRestUrl, REVEAL_SEQ)}"`);
    expect(rows[0]).toContain('<td class="nowrap" data-label="revealed">no</td>');
    expect(rows[0]).toContain('not verified yet');
    // Verified (nothing to re-derive before a reveal): the page then says how it was judged.
    await store.runVerification(TOPIC, runId(RUNS - 1));
    const after = [...(await page.page(TOPIC)).matchAll(/<tr class="runrow">(.*?)<\/tr>/g)].map((m) => m[1]!);
    const perRun = signals.length / RUNS;
    expect(after[0]).toContain(`not revealed yet: ${perRun} not checkable of ${perRun}`);
  });

  it("words a run's verification counts", () => {
    const counts = { 're-derived': 0, 'commitment-checked': 0, 'not-checkable': 0, mismatch: 0, equivocation: 0 };
    expect(verdictWords({ revealed: true, verification: null })).toMatch(/^not verified yet/);
    expect(verdictWords({ revealed: true, verification: { ...counts, 're-derived': 4 } })).toBe(
      'verified: all 4 signal(s) re-derived from the revealed key',
    );
    expect(verdictWords({ revealed: true, verification: { ...counts, 're-derived': 3, 'not-checkable': 2 } })).toBe(
      'no disagreement: 3 re-derived, 2 not checkable of 5',
    );
    expect(
      verdictWords({ revealed: true, verification: { ...counts, 're-derived': 3, mismatch: 1, equivocation: 2 } }),
    ).toBe('fails: 1 of 4 signal(s) disagree with what was published or revealed, 2 conflicting copies');
    expect(verdictWords({ revealed: false, verification: { ...counts, 'commitment-checked': 1 } })).toBe(
      'not revealed yet: 1 matched their commitment of 1',
    );
    expect(verdictWords({ revealed: false, verification: counts })).toBe('no signals to check');
  });
});

describe('badges', () => {
  it('colours by value: green from 80, red below 30, Shields steps between', () => {
    const at = (v: number) => badgeColor(v);
    expect([100, 90, 89.9, 80, 79.9, 70, 69.9, 50, 49.9, 30, 29.9, 0].map(at)).toEqual([
      'brightgreen',
      'brightgreen',
      'green',
      'green',
      'yellowgreen',
      'yellowgreen',
      'yellow',
      'yellow',
      'orange',
      'orange',
      'red',
      'red',
    ]);
    expect([100, 99.96, 87.46, 75, 0].map(badgeNumber)).toEqual(['100', '99.9', '87.4', '75', '0']);
  });

  it('answers Shields endpoint JSON: the score and the availability share, with their colours', async () => {
    const expected: Array<[string, string, string, string]> = [
      [MCP.always, 'score', '100', 'brightgreen'],
      [MCP.mostly, 'score', '75', 'yellowgreen'],
      [MCP.half, 'availability', '50%', 'yellow'],
      [MCP.rarely, 'score', '25', 'red'],
      [MCP.rarely, 'availability', '25%', 'red'],
      // The same colour as the one before, another value: each badge is its own subject's.
      [MCP.never, 'score', '0', 'red'],
      [MCP.never, 'availability', '0%', 'red'],
      [CATALOG, 'availability', 'n/a', 'lightgrey'],
      [uaid('never-seen.example.com'), 'score', 'unknown', 'lightgrey'],
    ];
    for (const [subject, metric, message, color] of expected) {
      const { res, body } = await json(local.url, `/v1/subjects/${enc(subject)}/badge/${metric}.json`);
      check('/v1/subjects/{subject}/badge/{metric}.json', res.status, body);
      expect(res.status).toBe(200);
      expect(body).toEqual({
        schemaVersion: 1,
        label: metric === 'score' ? 'trust score' : 'availability',
        message,
        color,
        cacheSeconds: 300,
      });
      expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    }
    // The catalog's score is its evals: the badge says the stored total.
    const stored = (await store.subjectScore(CATALOG, { topic: TOPIC }))!.score!;
    const { body } = await json(local.url, `/v1/subjects/${enc(CATALOG)}/badge/score.json?label=model`);
    expect(body).toMatchObject({ label: 'model', message: badgeNumber(stored.trustScores.total) });
  });

  it('says when the availability is stale, and when there is no probe', () => {
    const stale = computeScores(
      signals.filter((s) => s.message.subject === MCP.mostly),
      DEFAULT_SCORING_CONFIG,
      { now: new Date(T0 + 30 * 24 * HOUR) },
    ).subjects[0]!;
    expect(badgeFor('availability', stale)).toEqual({
      label: 'availability',
      message: '75% stale',
      color: 'yellowgreen',
    });
    const evalsOnly = computeScores(
      [evalSignal(uaid('quiet.example.com'), 'math', 'correct', { seq: 1, at: T0 })],
      DEFAULT_SCORING_CONFIG,
      { now: NOW },
    ).subjects[0]!;
    expect(badgeFor('availability', evalsOnly as SubjectScore).message).toBe('no data');
  });

  it('draws a well-formed, escaped flat SVG with cache headers and a strong ETag', async () => {
    const label = `<b>&"x"'</b>`;
    const res = await fetch(`${local.url}/v1/subjects/${enc(MCP.mostly)}/badge/availability.svg?label=${enc(label)}`);
    const svg = await res.text();
    check('/v1/subjects/{subject}/badge/{metric}.svg', res.status, svg, 'image/svg+xml');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/svg+xml; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    const root = parseXml(svg);
    expect(root.name).toBe('svg');
    expect(root.attrs.xmlns).toBe('http://www.w3.org/2000/svg');
    expect(root.attrs['aria-label']).toBe(`${label}: 75%`);
    expect(root.text).toContain(label);
    expect(svg).not.toContain('<b>');
    // Width from the text: the label box and the message box, 6.2 px a character (rounded) and 10 px of padding each.
    expect(Number(root.attrs.width)).toBe(74 + 10 + 19 + 10);
    expect(svg).toContain(`fill="${BADGE_COLORS.yellowgreen}"`);

    const unknown = await fetch(`${local.url}/v1/subjects/${enc(uaid('nobody.example.com'))}/badge/score.svg`);
    expect(unknown.status).toBe(200);
    expect(parseXml(await unknown.text()).attrs['aria-label']).toBe('trust score: unknown');
    // Control characters are refused at the edge.
    const bad = await json(local.url, `/v1/subjects/${enc(MCP.mostly)}/badge/score.svg?label=a%07b`);
    check('/v1/subjects/{subject}/badge/{metric}.svg', bad.res.status, bad.body);
    expect(bad.res.status).toBe(400);
    const twice = await json(local.url, `/v1/subjects/${enc(MCP.mostly)}/badge/score.svg?label=a&label=b`);
    expect(twice.res.status).toBe(400);
  });

  it('answers 304 to a current ETag, with the same cache headers', async () => {
    for (const path of [
      `/v1/subjects/${enc(MCP.half)}/badge/score.svg`,
      `/v1/subjects/${enc(MCP.half)}/badge/score.json`,
    ]) {
      const first = await fetch(`${local.url}${path}`);
      await first.arrayBuffer();
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
      const again = await fetch(`${local.url}${path}`, { headers: { 'If-None-Match': etag } });
      expect(again.status).toBe(304);
      expect(again.headers.get('etag')).toBe(etag);
      expect(again.headers.get('cache-control')).toBe('public, max-age=300');
      expect((await fetch(`${local.url}${path}`, { headers: { 'If-None-Match': '"other"' } })).status).toBe(200);
    }
    // The two forms and the two metrics are different bodies with different tags.
    const tags = await Promise.all(
      ['score.svg', 'score.json', 'availability.svg', 'availability.json'].map(async (f) =>
        (await fetch(`${local.url}/v1/subjects/${enc(MCP.mostly)}/badge/${f}`)).headers.get('etag'),
      ),
    );
    expect(new Set(tags).size).toBe(4);
  });

  it('a badge of a cached subject costs no query; it says what the score route says', async () => {
    const subject = MCP.always;
    const score = await json(local.url, `/v1/subjects/${enc(subject)}/score`);
    expect(score.res.status).toBe(200);
    const before = asked;
    const misses = events.scores!.misses;
    for (const f of ['score.svg', 'score.json', 'availability.svg', 'availability.json', 'score.json?label=mine']) {
      const res = await fetch(`${local.url}/v1/subjects/${enc(subject)}/badge/${f}`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    expect(asked).toBe(before);
    expect(events.scores!.misses).toBe(misses);
    const badge = await json(local.url, `/v1/subjects/${enc(subject)}/badge/score.json`);
    expect(badge.body.message).toBe(badgeNumber((score.body as SubjectScore).trustScores.total));
    // An unknown subject does ask (nothing to keep): the cache cannot answer it.
    await fetch(`${local.url}/v1/subjects/${enc(uaid('stranger.example.com'))}/badge/score.json`);
    expect(asked).toBe(before + 1);
  });

  it('renders text as text in the pure renderer too', () => {
    const svg = badgeSvg({ label: 'a<b', message: '1 & 2', color: 'red' });
    const root = parseXml(svg);
    expect(root.attrs['aria-label']).toBe('a<b: 1 & 2');
  });
});

interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  /** All text inside, entities decoded. */
  text: string;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(raw: string): string {
  if (/[<]/.test(raw)) throw new Error(`raw "<" in ${raw}`);
  return raw.replace(/&([^;]*);|&/g, (_, name: string | undefined) => {
    if (name === undefined) throw new Error('a bare "&"');
    if (Object.hasOwn(ENTITIES, name)) return ENTITIES[name]!;
    const num = /^#(\d+)$/.exec(name) ?? /^#x([0-9a-f]+)$/i.exec(name);
    if (!num) throw new Error(`unknown entity &${name};`);
    return String.fromCodePoint(Number.parseInt(num[1]!, name[1] === 'x' ? 16 : 10));
  });
}

/** A small XML well-formedness check: one root, balanced tags, quoted attributes, only known entities. */
function parseXml(xml: string): XmlElement {
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  const token = /<(\/?)([A-Za-z][\w:-]*)((?:\s+[\w:-]+="[^"]*")*)\s*(\/?)>|([^<]+)/gy;
  let at = 0;
  for (let m = token.exec(xml); m; m = token.exec(xml)) {
    at = token.lastIndex;
    const [, close, name, attrText, selfClose, text] = m;
    if (text !== undefined) {
      if (!stack.length) {
        if (text.trim()) throw new Error('text outside the root');
        continue;
      }
      const t = decode(text);
      for (const e of stack) e.text += t;
      continue;
    }
    if (close) {
      if (stack.pop()?.name !== name) throw new Error(`</${name}> closes nothing open`);
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of attrText!.matchAll(/([\w:-]+)="([^"]*)"/g)) {
      if (Object.hasOwn(attrs, a[1]!)) throw new Error(`attribute ${a[1]} twice`);
      attrs[a[1]!] = decode(a[2]!);
    }
    const el = { name: name!, attrs, text: '' };
    if (!stack.length) {
      if (root) throw new Error('a second root');
      root = el;
    }
    if (!selfClose) stack.push(el);
  }
  if (at !== xml.length) throw new Error(`not XML at ${at}: ${xml.slice(at, at + 20)}`);
  if (stack.length || !root) throw new Error('unclosed elements');
  return root;
}
