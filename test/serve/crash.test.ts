/**
 * SIGKILL at any moment loses and repeats nothing: a child process (the built store, dist/) applies batches of dense
 * packs and is killed mid-way; a second one resumes from the cursor. Both engines.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/serve/store/index.js';
import { startPostgres, type PostgresServer } from '../support/postgres.js';

const DIST = new URL('../../dist/', import.meta.url);
const FLEET = new URL('../support/fleet.mjs', import.meta.url);
const AGENTS = 400;
const TOTAL = AGENTS * 3;
const dir = mkdtempSync(join(tmpdir(), 'hcs25-serve-crash-'));
let pg: PostgresServer;

// The child: the same deterministic packs every time, applied from the stored cursor on, 3 messages a batch.
const child = join(dir, 'child.mjs');
writeFileSync(
  child,
  `
const [url, stateDir] = process.argv.slice(2);
const { openStore } = await import(${JSON.stringify(new URL('serve/store/index.js', DIST).href)});
const { classify } = await import(${JSON.stringify(new URL('read/reader.js', DIST).href)});
const { BatchBuilder } = await import(${JSON.stringify(new URL('serve/batch.js', DIST).href)});
const { buildSignalV2, SignalPacker } = await import(${JSON.stringify(new URL('format/index.js', DIST).href)});
const { syntheticResults } = await import(${JSON.stringify(FLEET.href)});
const results = await syntheticResults(${AGENTS}, Date.parse('2026-11-20T00:00:00Z'));
const packer = new SignalPacker({ mode: 'dense' });
const run = '01JDX3V9W5Q8K6T2N4M7P1R0ZA';
const signals = results.map((r) => buildSignalV2(r, { run, runKey: Buffer.alloc(32, 1) }).message);
const bodies = [...signals.flatMap((s) => packer.add(s)), ...packer.flush()].map((m) => m.bytes);
const store = await openStore(url === 'pglite' ? undefined : url, { stateDir });
const cursor = (await store.cursor('0.0.7'))?.sequence ?? 0;
const seen = new Map();
for (let i = cursor; i < bodies.length; i += 3) {
  const builder = new BatchBuilder();
  for (let j = i; j < Math.min(i + 3, bodies.length); j++) {
    const m = { sequenceNumber: j + 1, consensusTimestamp: \`1795000000.\${String(j).padStart(9, '0')}\`, payerAccountId: '0.0.1001', message: bodies[j] };
    for (const e of classify(m, new Set(), seen)) builder.add(e);
  }
  seen.clear();
  await store.applyBatch('0.0.7', builder.take('rest'));
  process.stdout.write('.');
}
await store.close();
process.stdout.write('done ' + bodies.length + '\\n');
`,
);

function runChild(url: string, killAfterDots?: number): Promise<{ out: string; killed: boolean }> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [child, url, join(dir, 'state')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (killAfterDots !== undefined && out.split('.').length - 1 >= killAfterDots) p.kill('SIGKILL');
    });
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', reject);
    p.on('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve({ out, killed: true });
      else if (code === 0) resolve({ out, killed: false });
      else reject(new Error(`child exited ${code}: ${err}`));
    });
  });
}

beforeAll(async () => {
  if (!existsSync(new URL('serve/store/index.js', DIST)))
    throw new Error('these tests run the built store; run `npm run build` first');
  pg = await startPostgres();
}, 60_000);

afterAll(async () => {
  await pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['pglite', 'postgres'])('SIGKILL while indexing (%s)', (engine) => {
  it('the restarted process resumes from the cursor: every signal once', async () => {
    const url = engine === 'pglite' ? 'pglite' : await pg.database('crash');
    const first = await runChild(url, 5);
    expect(first.killed).toBe(true);
    const second = await runChild(url);
    expect(second.out).toMatch(/done \d+/);
    const store = await openStore(engine === 'pglite' ? undefined : url, { stateDir: join(dir, 'state') });
    try {
      const [status] = await store.topics();
      expect(status!.counts.signals).toBe(TOTAL);
      expect(status!.counts.rejected).toEqual({});
      expect(status!.lastSequence).toBe(Number(/done (\d+)/.exec(second.out)![1]));
    } finally {
      await store.close();
    }
  }, 180_000);
});
