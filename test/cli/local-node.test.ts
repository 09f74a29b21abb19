/** `hcs25 local-node` in-process: flags, --json output, faults from flags, clean stop on SIGTERM. */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Command } from 'commander';
import { localNodeEnv, register } from '../../src/cli/local-node.js';
import { getJson } from '../localnode/helpers.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('hcs25 local-node', () => {
  it('prints ports, operator and accounts as JSON, serves, and stops on SIGTERM', async () => {
    // Only the command's own listeners may see the emitted signal.
    expect(process.listeners('SIGTERM')).toHaveLength(0);
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const program = new Command().option('--json').exitOverride();
    register(program);
    const done = program.parseAsync([
      'node',
      'hcs25',
      '--json',
      'local-node',
      '--port',
      '0',
      '--mirror-grpc-port',
      '0',
      '--mirror-rest-port',
      '0',
      '--accounts',
      '1',
      '--fault',
      'busy@getTopicInfo:1',
    ]);
    let printed:
      | {
          ports: { consensus: number; mirrorRest: number };
          mirrorRestUrl: string;
          operator: { accountId: string };
          accounts: unknown[];
        }
      | undefined;
    for (let i = 0; i < 200 && !printed; i++) {
      await new Promise((r) => setTimeout(r, 25));
      if (out.join('').trim().endsWith('}')) printed = JSON.parse(out.join(''));
    }
    expect(printed?.operator.accountId).toBe('0.0.2');
    expect(printed?.accounts).toHaveLength(3);
    expect(printed?.ports.consensus).toBeGreaterThan(0);
    const account = await getJson(`${printed!.mirrorRestUrl}/api/v1/accounts/0.0.1002`);
    expect(account.status).toBe(200);
    process.emit('SIGTERM');
    await done;
    expect(process.exitCode ?? 0).toBe(0);
    expect(process.listeners('SIGTERM')).toHaveLength(0);
    await expect(fetch(`${printed!.mirrorRestUrl}/api/v1/accounts/0.0.2`)).rejects.toThrow();
  });

  it('rejects a bad fault spec as a usage error', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const program = new Command().exitOverride();
    register(program);
    await program.parseAsync(['node', 'hcs25', 'local-node', '--fault', 'sometimes:1']);
    expect(process.exitCode).toBe(2);
    process.exitCode = 0;
  });

  it('points the other commands at loopback when the node listens on every interface', () => {
    const node = {
      network: { '0.0.0.0:41211': '0.0.3', '0.0.0.0:42211': '0.0.4' },
      ports: { consensus: 41211, mirrorGrpc: 41600, mirrorRest: 41551 },
      mirrorRestUrl: 'http://0.0.0.0:41551',
    };
    for (const host of ['0.0.0.0', '::'])
      expect(localNodeEnv(node, host)).toEqual({
        HCS25_NETWORK: 'local',
        HCS25_NODES: '127.0.0.1:41211=0.0.3,127.0.0.1:42211=0.0.4',
        HCS25_MIRROR_GRPC: '127.0.0.1:41600',
        HCS25_MIRROR_REST_URL: 'http://127.0.0.1:41551',
      });
    expect(localNodeEnv({ ...node, network: { '10.1.2.3:41211': '0.0.3' } }, '10.1.2.3').HCS25_MIRROR_GRPC).toBe(
      '10.1.2.3:41600',
    );
  });

  it('prints the settings that point other commands at it, and writes them to a new .env file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcs25-local-env-'));
    const main = resolve(import.meta.dirname, '../../dist/cli/main.js');
    const envFile = join(dir, 'node.env');
    // A clean environment: only what the printed lines and the file say reaches the commands.
    const bare = { PATH: process.env.PATH ?? '', HOME: dir, HCS25_STATE_DIR: join(dir, 'state') };
    const node = spawn(
      process.execPath,
      [main, 'local-node', '--port', '0', '--mirror-grpc-port', '0', '--mirror-rest-port', '0', '--write-env', envFile],
      { cwd: dir, env: bare },
    );
    let stdout = '';
    node.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    try {
      await new Promise<void>((ready, fail) => {
        node.stderr.on('data', (chunk: Buffer) => chunk.toString('utf8').includes('local node running') && ready());
        node.once('exit', (code) => fail(new Error(`local-node exited ${code}: ${stdout}`)));
      });
      const exported = Object.fromEntries(
        [...stdout.matchAll(/^ {2}export (HCS25_\w+)=(.+)$/gm)].map((m) => [m[1]!, m[2]!]),
      );
      expect(Object.keys(exported)).toEqual([
        'HCS25_NETWORK',
        'HCS25_NODES',
        'HCS25_MIRROR_GRPC',
        'HCS25_MIRROR_REST_URL',
      ]);
      expect(stdout).not.toMatch(/with no settings/);
      expect(readFileSync(envFile, 'utf8')).toContain(`HCS25_MIRROR_REST_URL=${exported.HCS25_MIRROR_REST_URL}\n`);
      const hcs25 = (args: string[], env: Record<string, string>) =>
        spawnSync(process.execPath, [main, ...args], {
          cwd: dir,
          env: { ...bare, ...env },
          encoding: 'utf8',
          timeout: 60_000,
        });
      const pasted = hcs25(['topic', 'create', '--no-schemas'], exported);
      expect(pasted.stderr).toMatch(/created signal topic 0\.0\.\d+ on local/);
      expect(pasted.status).toBe(0);
      const fromFile = hcs25(['--dotenv', envFile, 'topic', 'create', '--no-schemas'], {});
      expect(fromFile.status).toBe(0);
      // An existing file is never overwritten.
      const again = hcs25(
        ['local-node', '--port', '0', '--mirror-grpc-port', '0', '--mirror-rest-port', '0', '--write-env', envFile],
        {},
      );
      expect(again.status).toBe(2);
      expect(again.stderr).toMatch(/already exists/);
    } finally {
      node.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
