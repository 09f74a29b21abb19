import { spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/fleet.js';

// Runs the built CLI (dist/), like the other CLI tests: `npm run build` first.
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const main = resolve(root, 'dist/cli/main.js');

/** Async on purpose: the fleet runs in this process, so a synchronous spawn would leave it unable to answer. */
function hcs25(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [main, ...args], {
      cwd: root,
      env: { ...process.env, HCS25_NETWORK: 'testnet' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (status) => done({ status, stdout, stderr }));
  });
}

describe('hcs25 eval', () => {
  let fleet: AgentFleet;
  const endpoint = (name: string) => {
    const record = fleet.agents.find((a) => a.name === name)!;
    return 'endpoint' in record ? record.endpoint : '';
  };
  beforeAll(async () => {
    fleet = await startAgentFleet({ include: ['perfect', 'a2a-calc'] });
  });
  afterAll(async () => {
    await fleet.stop();
  });

  it('evaluates an OpenAI-compatible agent and prints JSON', async () => {
    const r = await hcs25([
      'eval',
      '--endpoint',
      endpoint('perfect'),
      '--protocol',
      'openai',
      '--seed',
      's1',
      '--allow-private-endpoints',
      '--json',
    ]);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      seed: string;
      results: Array<{ kind: string; outcome?: string; reachable?: boolean }>;
    };
    expect(out.seed).toBe('s1');
    expect(out.results.map((x) => [x.kind, x.outcome ?? x.reachable])).toEqual([
      ['availability', true],
      ['math', 'correct'],
      ['science', 'correct'],
    ]);
  });

  it('evaluates an A2A agent with a subset of evals, in text', async () => {
    const r = await hcs25([
      'eval',
      '--endpoint',
      endpoint('a2a-calc'),
      '--protocol',
      'a2a',
      '--evals',
      'math',
      '--allow-private-endpoints',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^ {2}math +correct .*score 100/m);
    expect(r.stdout).not.toMatch(/science/);
  });

  it('refuses a loopback endpoint off the local network, with a hint (exit 1: nothing could be measured)', async () => {
    const r = await hcs25(['eval', '--endpoint', endpoint('perfect'), '--protocol', 'openai', '--evals', 'math']);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/math +error .*non-public address 127\.0\.0\.1/);
    expect(r.stderr).toMatch(/--allow-private-endpoints/);
  });

  it('exits 2 on a bad protocol or eval list', async () => {
    expect((await hcs25(['eval', '--endpoint', 'http://x.example', '--protocol', 'smtp'])).status).toBe(2);
    expect(
      (await hcs25(['eval', '--endpoint', 'http://x.example', '--protocol', 'openai', '--evals', 'math,speed'])).status,
    ).toBe(2);
    expect((await hcs25(['eval', '--endpoint', 'ftp://x.example', '--protocol', 'openai'])).status).toBe(2);
  });
});

describe('hcs25 agents', () => {
  it('prints one agent record per line and stops on SIGINT (exit 130, as shells expect of Ctrl-C)', async () => {
    const child = spawn(process.execPath, [main, 'agents', '--only', 'perfect,mcp-tools'], { cwd: root });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      if (d.toString().includes('Ctrl-C')) child.kill('SIGINT');
    });
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code).toBe(130);
    const records = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { name: string; protocol: string; endpoint: string });
    expect(records.map((x) => [x.name, x.protocol])).toEqual([
      ['perfect', 'openai'],
      ['mcp-tools', 'mcp'],
    ]);
    expect(records[1]!.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });
});
