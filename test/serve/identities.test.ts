/**
 * The indexer's naming rounds (serve/identities.ts) over an embedded store, with a registry reader that counts its
 * reads: bounded per round, a failing registry backed off and retried, a named one read again for newer citations
 * only after `refreshMs`, each registry read as it was at the newest citing signal.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hcs25Client } from '../../src/client.js';
import type { Agent } from '../../src/core/agent.js';
import type { ReadSignal } from '../../src/read/types.js';
import { identityResolver } from '../../src/serve/identities.js';
import { openStore, type ServeStore } from '../../src/serve/store/index.js';
import { probe, T0, uaid } from '../support/signals.js';

const TOPIC = '0.0.5151';
let dir: string;
let store: ServeStore;
let seq = 0;

async function cite(subject: string, registry: string): Promise<ReadSignal> {
  const s = probe(subject, { seq: ++seq, at: T0 + seq * 1000, sources: [`hcs://2/${registry}`] });
  await store.applyBatch(TOPIC, {
    signals: [s],
    records: [],
    unknown: [],
    rejected: [],
    cursor: { sequence: s.sequenceNumber, consensusTimestamp: s.consensusTimestamp },
    source: 'rest',
  });
  return s;
}

const agent = (subject: string, name: string, registry: string, registrySeq: number): Agent => ({
  subject,
  name,
  protocol: 'a2a',
  endpoint: `https://${name}.example/a2a`,
  source: `hcs://2/${registry}`,
  registrySeq,
});

const identity = async (subject: string) => (await store.subjectScore(subject, { topic: TOPIC }))?.identity;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hcs25-identities-'));
  store = await openStore('memory://', { stateDir: dir });
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('identityResolver', () => {
  it('reads a few registries a round, backs off one that fails, refreshes a named one only after refreshMs', async () => {
    const [a, b, c] = ['a.example', 'b.example', 'c.example'].map((host) => uaid(host));
    await cite(a!, '0.0.1');
    await cite(b!, '0.0.2');
    const newest = await cite(c!, '0.0.3');
    const reads: Array<{ registry: string; until: string }> = [];
    let failing = true;
    const notes: string[] = [];
    const resolver = identityResolver({} as Hcs25Client, {
      store,
      signal: new AbortController().signal,
      registriesPerRound: 2,
      refreshMs: 60_000,
      minRetryMs: 1_000,
      maxRetryMs: 8_000,
      note: (n) => notes.push(n),
      async discover(registry, until) {
        reads.push({ registry, until });
        if (registry === '0.0.2' && failing) throw new Error('mirror node: HTTP 503');
        return [agent(a!, 'alpha', '0.0.1', 4), agent(c!, 'gamma', '0.0.3', 7)];
      },
    });

    const t = 1_000_000;
    // Two of three registries; the one that fails says when it is tried again.
    expect(await resolver.round(t)).toEqual({ more: true, nextAt: t + 1_000 });
    expect(reads.map((r) => r.registry)).toEqual(['0.0.1', '0.0.2']);
    expect(await identity(a!)).toMatchObject({ name: 'alpha', entry: 'hcs://2/0.0.1#4', status: 'resolved' });
    expect(await identity(b!)).toMatchObject({ status: 'unavailable', note: 'mirror node: HTTP 503', name: null });
    expect(notes).toEqual([expect.stringMatching(/^registry 0\.0\.2: cannot be read \(mirror node: HTTP 503\)/)]);

    // The third registry next; the failing one waits for its backoff (1 s), and says when.
    expect(await resolver.round(t + 10)).toEqual({ more: false, nextAt: t + 1_000 });
    expect(reads.map((r) => r.registry)).toEqual(['0.0.1', '0.0.2', '0.0.3']);
    // Read as the registry was at the newest signal citing it.
    expect(reads[2]!.until).toBe(newest.consensusTimestamp);
    expect(await identity(c!)).toMatchObject({ name: 'gamma', sequence: 7 });
    expect(await resolver.round(t + 500)).toEqual({ more: false, nextAt: t + 1_000 });
    expect(reads).toHaveLength(3);

    // Failing again doubles the wait; once readable, b is named as not listed (the registry does not list it).
    expect(await resolver.round(t + 1_000)).toEqual({ more: false, nextAt: t + 3_000 });
    expect(reads).toHaveLength(4);
    failing = false;
    expect(await resolver.round(t + 3_000)).toEqual({ more: false, nextAt: null });
    expect(reads).toHaveLength(5);
    expect(await identity(b!)).toMatchObject({ status: 'not-listed', note: null });
    expect(notes.at(-1)).toBe('registry 0.0.2: readable again, naming its subjects');

    // A newer signal citing a registry read recently: read again once refreshMs has passed since, not before.
    await cite(a!, '0.0.1');
    expect(await resolver.round(t + 30_000)).toEqual({ more: false, nextAt: t + 60_000 });
    expect(reads).toHaveLength(5);
    expect(await resolver.round(t + 60_000)).toEqual({ more: false, nextAt: null });
    expect(reads.map((r) => r.registry).at(-1)).toBe('0.0.1');
    expect(await resolver.round(t + 60_001)).toEqual({ more: false, nextAt: null });
    expect(reads).toHaveLength(6);
    // A subject never named before is read at once, whenever its registry was read.
    const d = uaid('d.example');
    await cite(d, '0.0.1');
    await resolver.round(t + 60_002);
    expect(reads).toHaveLength(7);
    expect(await identity(d)).toMatchObject({ status: 'not-listed', registry: '0.0.1' });
  });
});
