/** `hcs25 eval --protocol hcs-10` against sample HCS-10 agents on the emulator, in-process, configured like a user would. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register } from '../../src/cli/eval.js';
import { startHcs10Fleet, type Hcs10Fleet } from '../../src/devtools/hcs10-agents.js';
import { startLocalNode, type LocalNode } from '../../src/localnode/index.js';
import { runCli, useEmulatorEnv } from '../support/cli.js';

let node: LocalNode;
let fleet: Hcs10Fleet;
let stateDir: string;
let restoreEnv: (() => void) | undefined;

beforeAll(async () => {
  node = await startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, mirrorLagMs: 100, quiet: true });
  fleet = await startHcs10Fleet({ node, include: ['correct', 'silent'], pollMs: 50 });
  stateDir = mkdtempSync(join(tmpdir(), 'hcs25-eval-hcs10-'));
  restoreEnv = useEmulatorEnv(node, stateDir);
});

afterAll(async () => {
  restoreEnv?.();
  await fleet?.stop();
  await node?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const hcs25 = (args: string[]) => runCli([register], args);
const account = (name: string) => fleet.agents.find((a) => a.name === name)!.accountId;

describe('hcs25 eval --protocol hcs-10', () => {
  it('asks an HCS-10 agent over HCS, found by its account, and grades its answers', async () => {
    const r = await hcs25([
      '--json',
      'eval',
      '--protocol',
      'hcs-10',
      '--account',
      account('hcs10-correct'),
      '--seed',
      's1',
      '--hcs10-budget-ms',
      '15000',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      agent: { accountId: string };
      results: Array<{ kind: string; outcome?: string; reachable?: boolean }>;
    };
    expect(out.agent.accountId).toBe(account('hcs10-correct'));
    expect(out.results.map((x) => [x.kind, x.outcome ?? x.reachable])).toEqual([
      ['availability', true],
      ['math', 'correct'],
      ['science', 'correct'],
    ]);
  });

  it('times out on an agent that never answers, within its budget (exit 1: nothing could be measured)', async () => {
    const r = await hcs25([
      '--json',
      'eval',
      '--protocol',
      'hcs-10',
      '--account',
      account('hcs10-silent'),
      '--evals',
      'math',
      '--hcs10-budget-ms',
      '2000',
    ]);
    expect(r.code, r.stderr).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ results: [{ kind: 'math', outcome: 'timeout', score: 0 }] });
  });

  it('says what an hcs-10 agent needs', async () => {
    const r = await hcs25(['eval', '--protocol', 'hcs-10']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--account/);
    const bad = await hcs25(['eval', '--protocol', 'hcs-10', '--account', 'alice']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--account must be an id/);
  });
});
