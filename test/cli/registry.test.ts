/** `hcs25 registry create|register` and `hcs25 discover` against the emulator, in-process, configured through the environment. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register as registerDiscover } from '../../src/cli/discover.js';
import { register as registerRegistry } from '../../src/cli/registry.js';
import { startLocalNode, type LocalNode } from '../../src/localnode/index.js';
import { runCli, useEmulatorEnv } from '../support/cli.js';

let node: LocalNode;
let dir: string;
let restoreEnv: () => void = () => undefined;

beforeAll(async () => {
  node = await startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, quiet: true });
  dir = mkdtempSync(join(tmpdir(), 'hcs25-registry-cli-'));
  restoreEnv = useEmulatorEnv(node, dir);
});

afterAll(async () => {
  restoreEnv();
  await node?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const hcs25 = (args: string[]) => runCli([registerRegistry, registerDiscover], args);

function file(name: string, content: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(content));
  return path;
}

describe('hcs25 registry + discover', () => {
  it('register --record takes one record as an object, a one-element list or one JSON line; more is one clear error', async () => {
    const { topicId } = JSON.parse((await hcs25(['--json', 'registry', 'create', '--kind', 'hcs-2'])).stdout) as {
      topicId: string;
    };
    const record = { name: 'lines', protocol: 'a2a', endpoint: 'http://127.0.0.1:4105/a2a' };
    const line = join(dir, 'one.jsonl');
    writeFileSync(line, `${JSON.stringify(record)}\n`);
    const register = (path: string) => hcs25(['registry', 'register', '--registry', topicId, '--record', path]);
    expect((await register(line)).code).toBe(0);
    expect((await register(file('list.json', [record]))).code).toBe(0);
    const two = join(dir, 'two.jsonl');
    writeFileSync(two, `${JSON.stringify(record)}\n${JSON.stringify(record)}\n`);
    const many = await register(two);
    expect(many.code).toBe(2);
    expect(many.stderr).toMatch(/two\.jsonl holds 2 records; --record registers one/);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"name":"x",}\n');
    const bad = await register(broken);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/broken\.json is neither JSON nor JSON lines: line 1: /);
  });
  it('creates an HCS-2 registry, registers records and references, and discovers them', async () => {
    const created = await hcs25(['--json', 'registry', 'create', '--kind', 'hcs-2']);
    expect(created.code).toBe(0);
    const { topicId, memo } = JSON.parse(created.stdout) as { topicId: string; memo: string };
    expect(memo).toBe('hcs-2:0:86400');

    const small = await hcs25([
      '--json',
      'registry',
      'register',
      '--registry',
      topicId,
      '--record',
      file('a.json', { name: 'calc', protocol: 'a2a', endpoint: 'http://127.0.0.1:4101/a2a' }),
    ]);
    expect(small.code).toBe(0);
    expect(JSON.parse(small.stdout)).toMatchObject({ registry: topicId, kind: 'hcs-2', sequenceNumber: 1 });
    // Too large for one message: inscribed as an HCS-1 file and registered by reference.
    const longName = 'n'.repeat(120);
    const big = await hcs25([
      '--json',
      'registry',
      'register',
      '--registry',
      topicId,
      '--record',
      file('b.json', {
        name: longName,
        protocol: 'openai',
        endpoint: `http://127.0.0.1:4102/v1?${'q'.repeat(1000)}`,
        model: 'm',
      }),
    ]);
    expect(big.code).toBe(0);
    const data = `data:application/json,${encodeURIComponent(JSON.stringify({ name: 'inline-uri', protocol: 'http', endpoint: 'http://127.0.0.1:4103/ask' }))}`;
    expect((await hcs25(['registry', 'register', '--registry', topicId, '--metadata', data])).code).toBe(0);

    const json = await hcs25(['--json', 'discover', '--registry', `hcs://2/${topicId}`]);
    expect(json.code).toBe(0);
    const out = JSON.parse(json.stdout) as {
      registry: { kind: string; messages: number };
      agents: { name: string; protocol: string; subject: string }[];
      skipped: unknown[];
    };
    expect(out.registry).toMatchObject({ kind: 'hcs-2', messages: 3 });
    expect(out.agents.map((a) => [a.name, a.protocol])).toEqual([
      ['calc', 'a2a'],
      [longName, 'openai'],
      ['inline-uri', 'http'],
    ]);
    expect(out.skipped).toEqual([]);
    expect(out.agents[0]!.subject).toMatch(
      /^uaid:aid:[1-9A-HJ-NP-Za-km-z]+;uid=0;registry=self;proto=a2a;nativeId=127\.0\.0\.1:4101$/,
    );

    const human = await hcs25([
      'discover',
      '--registry',
      topicId,
      '--agents',
      file('agents.json', [
        { name: 'extra', protocol: 'http', endpoint: 'http://127.0.0.1:4104' },
        { name: 'bad', protocol: 'x' },
      ]),
    ]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^registry 0\.0\.\d+ \(hcs-2, indexed, ttl 86400s\): 3 messages$/m);
    expect(human.stdout).toContain('4 agents');
    expect(human.stdout).toMatch(/#1 +calc +\[a2a\] http:\/\/127\.0\.0\.1:4101\/a2a/);
    expect(human.stdout).toMatch(/agents\.json#1 +invalid agent record: protocol/);
  });

  it('creates an HCS-10 registry and registers an account', async () => {
    const created = await hcs25(['--json', 'registry', 'create', '--kind', 'hcs-10']);
    const { topicId, memo } = JSON.parse(created.stdout) as { topicId: string; memo: string };
    expect(memo).toBe('hcs-10:0:60:3');
    const r = await hcs25(['--json', 'registry', 'register', '--registry', topicId, '--account', '0.0.1002']);
    expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'hcs-10', sequenceNumber: 1 });
    const d = await hcs25(['--json', 'discover', '--registry', topicId]);
    const out = JSON.parse(d.stdout) as { agents: unknown[]; skipped: { reason: string }[] };
    expect(out.agents).toEqual([]);
    expect(out.skipped).toEqual([
      {
        ref: `hcs://2/${topicId}#1`,
        reason: 'account 0.0.1002 has no HCS-11 profile and its registration names no inbound topic',
      },
    ]);
    expect(
      (await hcs25(['registry', 'register', '--registry', topicId, '--record', file('c.json', {})])).stderr,
    ).toMatch(/HCS-10 registries list accounts/);
  });

  it('usage errors exit 2, a missing registry exits 1', async () => {
    const none = await hcs25(['discover']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/nothing to discover/);
    const both = await hcs25(['registry', 'register', '--registry', '0.0.5']);
    expect(both.code).toBe(2);
    const bad = await hcs25([
      'registry',
      'register',
      '--registry',
      '0.0.5',
      '--kind',
      'hcs-2',
      '--record',
      file('d.json', { name: 'x', protocol: 'a2a', endpoint: 'ftp://x' }),
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/invalid agent record: endpoint/);
    const missing = await hcs25(['--json', 'discover', '--registry', '0.0.987654']);
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: { code: 'REGISTRY_NOT_FOUND' } });
  });
});
