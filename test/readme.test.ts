/**
 * The README's shell blocks are executed, in order, in one shell, as a user would type them: `hcs25` is bin/hcs25 on
 * PATH and the environment points at an embedded local node (the one thing a user's machine would provide: a node),
 * with a sample agent behind the README's `agent.json`. Blocks that call npm (quick start, development) are what CI
 * itself runs; for those the test checks that every npm script they name exists.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentFleet, type AgentFleet } from '../src/devtools/agents/index.js';
import { startLocalNode, type LocalNode } from '../src/localnode/index.js';
import { emulatorEnv } from './support/cli.js';

const root = resolve(import.meta.dirname, '..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const blocks = [...readme.matchAll(/^( *)```(\w*)\n([\s\S]*?)^\1```/gm)].map((m) => ({
  lang: m[2]!,
  body: m[3]!.split('\n').map((l) => l.slice(m[1]!.length)).join('\n'),
}));
const shell = blocks.filter((b) => b.lang === 'sh');
const npmBlocks = shell.filter((b) => /^\s*npm /m.test(b.body));
const runnable = shell.filter((b) => !npmBlocks.includes(b));

let node: LocalNode;
let fleet: AgentFleet;
const cwd = mkdtempSync(join(tmpdir(), 'hcs25-readme-'));

beforeAll(async () => {
  node = await startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, quiet: true });
  fleet = await startAgentFleet({ include: ['perfect'] });
});
afterAll(async () => {
  await fleet?.stop();
  await node?.stop();
  rmSync(cwd, { recursive: true, force: true });
});

describe('README', () => {
  it('has shell blocks to run, and its npm blocks name scripts that exist', () => {
    expect(runnable.length).toBeGreaterThanOrEqual(4);
    const scripts = Object.keys((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);
    for (const block of npmBlocks) {
      for (const [, name] of block.body.matchAll(/npm run (\w+)/g)) expect(scripts, `npm run ${name}`).toContain(name);
      for (const line of block.body.split('\n').filter((l) => l.trim())) expect(line).toMatch(/^npm (ci|test|run \w+)\b/);
    }
  });

  it('every shell block works as written against a local node', async () => {
    // agent.json as the README shows it, pointed at a live sample agent.
    const record = JSON.parse(blocks.find((b) => b.lang === 'json' && b.body.includes('"protocol"'))!.body) as Record<string, string>;
    const perfect = fleet.agents[0]!;
    writeFileSync(join(cwd, 'agent.json'), JSON.stringify({ ...record, endpoint: 'endpoint' in perfect ? perfect.endpoint : '', model: 'sample-perfect' }));
    const bin = join(cwd, 'bin');
    mkdirSync(bin);
    writeFileSync(join(bin, 'hcs25'), `#!/bin/sh\nexec ${JSON.stringify(join(root, 'bin/hcs25'))} "$@"\n`, { mode: 0o755 });
    const script = ['set -eu', ...runnable.map((b) => b.body)].join('\n');
    const env = {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      ...emulatorEnv(node),
      HCS25_ALLOW_PRIVATE_ENDPOINTS: 'true',
      HCS25_BUDGET_MS: '5000',
    };
    const r = await promisify(execFile)('bash', ['-c', script], { cwd, env, timeout: 240_000 }).catch((err: { stdout: string; stderr: string; code: number }) => err);
    expect((r as { code?: number }).code ?? 0, `${r.stderr}`).toBe(0);
    expect(existsSync(join(cwd, 'report.html'))).toBe(true);
    // The last block revealed the run and verified it: every eval signal verified, nothing mismatched.
    expect(r.stdout).toMatch(/: \d+ eval signal\(s\): (\d+) verified, 0 mismatch, 0 unverifiable/);
    // Every README command in turn (runs, a reveal, scores, serve…): the whole walk may take minutes on a loaded machine.
  }, 240_000);
});
