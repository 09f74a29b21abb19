import { spawn, spawnSync } from 'node:child_process';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const main = resolve(root, 'dist/cli/main.js');

function hcs25(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [main, ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout: 30_000,
  });
}

/** As hcs25(), without blocking this process's event loop (the test serves something meanwhile). */
function hcs25Async(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ status: number | null; stderr: string }>((done) => {
    const child = spawn(process.execPath, [main, ...args], { cwd: root, env: { ...process.env, ...env } });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('close', (status) => done({ status, stderr }));
  });
}

describe('hcs25 CLI', () => {
  it('--help lists every command of DESIGN §2', () => {
    const r = hcs25(['--help']);
    expect(r.status).toBe(0);
    for (const command of [
      'demo',
      'local-node',
      'topic',
      'registry',
      'discover',
      'eval',
      'run',
      'signals',
      'scores',
      'reveal',
      'verify',
      'grade',
    ]) {
      expect(r.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
    }
    for (const option of ['--network', '--json']) expect(r.stdout).toContain(option);
  });

  it('run and watch take the same HCS-10 flags, checked before anything starts', () => {
    for (const command of ['run', 'watch']) {
      const help = hcs25([command, '--help']);
      for (const option of ['--hcs10-budget-ms', '--allow-topic-fees', '--max-topic-fee-hbar'])
        expect(help.stdout).toContain(option);
      const bad = hcs25([command, '--hcs10-budget-ms', '5']);
      expect(bad.status).toBe(2);
      expect(bad.stderr).toMatch(/--hcs10-budget-ms must be a whole number from 1000 to 600000, got "5"/);
    }
  });

  it('--version prints the package version', () => {
    const pkg = JSON.parse(readFileSync(resolve(root, 'package.json'), 'utf8')) as { version: string };
    const r = hcs25(['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it('exits 2 with a one-line error on a usage error', () => {
    const r = hcs25(['no-such-command']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown command/);
  });

  it('exits 2 on an agents file that is not JSON, naming the line, before any node is asked', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hcs25-agents-'));
    const file = join(dir, 'agents.json');
    writeFileSync(file, '[{"name":"a","protocol":"a2a","endpoint":"https://a.example.com"},]\n');
    // The mirror node named here does not exist: the file is refused before it would be asked.
    const r = hcs25(['run', '--agents', file, '--topic', '0.0.5', '--dry-run'], {
      HCS25_MIRROR_REST_URL: 'http://127.0.0.1:9',
    });
    rmSync(dir, { recursive: true, force: true });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/agents\.json is neither JSON nor JSON lines: line 1: /);
    expect(r.stderr).toMatch(/hint: .*trailing comma/);
    expect(r.stderr).not.toMatch(/mirror node/);
  });

  it('exits 2 and names the variable on bad configuration', () => {
    const r = hcs25(['signals', '--topic', '0.0.5'], { HCS25_NETWORK: 'moonnet' });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/HCS25_NETWORK/);
  });

  it('names the valid networks and guesses the one meant, for a flag or a variable', () => {
    const flag = hcs25(['signals', '--topic', '0.0.5', '--network', 'testnt']);
    expect(flag.status).toBe(2);
    expect(flag.stderr).toMatch(
      /^hcs25: --network: "testnt" is not one of local, solo, testnet, previewnet, mainnet, custom/m,
    );
    expect(flag.stderr).toMatch(/hint: did you mean testnet\?/);
    expect(flag.stderr).not.toMatch(/Invalid option|expected one of/);
    const env = hcs25(['signals', '--topic', '0.0.5'], { HCS25_NETWORK: 'mainet' });
    expect(env.stderr).toMatch(/HCS25_NETWORK: "mainet" is not one of/);
    expect(env.stderr).toMatch(/did you mean mainnet\?/);
  });

  it('HCS25_MIRROR_TIMEOUT_MS sets how long a mirror request may take; each retry is said on stderr', async () => {
    // Accepts connections and never answers, as an overloaded or wedged mirror node does.
    const server = createTcpServer(() => {});
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await hcs25Async(['signals', '--topic', '0.0.5'], {
      HCS25_NETWORK: 'custom',
      HCS25_NODES: '127.0.0.1:9=0.0.3',
      HCS25_MIRROR_REST_URL: url,
      HCS25_MIRROR_TIMEOUT_MS: '200',
    });
    server.close();
    expect(r.status).toBe(1);
    const retries = r.stderr.split('\n').filter((l) => /did not answer within 200 ms.*; retrying in/.test(l));
    expect(retries.map((l) => /\(try (\d) of 6\)/.exec(l)?.[1])).toEqual(['2', '3', '4', '5', '6']);
    expect(r.stderr).toMatch(/hint: .*--mirror-timeout MS or HCS25_MIRROR_TIMEOUT_MS \(now 200\)/);
  }, 30_000);

  it('run takes its patience with a busy network from --retry-for or HCS25_RETRY_FOR, checked before any network call', () => {
    const env = hcs25(['run', '--registry', '0.0.5'], { HCS25_RETRY_FOR: 'a while' });
    expect(env.status).toBe(2);
    expect(env.stderr).toMatch(/HCS25_RETRY_FOR.*must be a duration like 90s, 30m/);
    const flag = hcs25(['run', '--registry', '0.0.5', '--retry-for', 'a while'], { HCS25_RETRY_FOR: '10m' });
    expect(flag.status).toBe(2);
    expect(flag.stderr).toMatch(/--retry-for must be a duration like 90s, 30m, 24h or 7d, got "a while"/);
    expect(hcs25(['run', '--help']).stdout).toMatch(/env HCS25_RETRY_FOR/);
  });

  it('--mirror-timeout sets the same limit as HCS25_MIRROR_TIMEOUT_MS, and wins over it', async () => {
    const server = createTcpServer(() => {});
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const r = await hcs25Async(['--mirror-timeout', '150', 'signals', '--topic', '0.0.5'], {
      HCS25_NETWORK: 'custom',
      HCS25_NODES: '127.0.0.1:9=0.0.3',
      HCS25_MIRROR_REST_URL: url,
      HCS25_MIRROR_TIMEOUT_MS: '5000',
    });
    server.close();
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/did not answer within 150 ms.*; retrying in .*\(try 2 of 6\)/);
    expect(r.stderr).toMatch(/hint: .*--mirror-timeout MS or HCS25_MIRROR_TIMEOUT_MS \(now 150\)/);
    const bad = hcs25(['signals', '--topic', '0.0.5', '--mirror-timeout', 'soon']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--mirror-timeout must be a whole number from 100 to 600000, got "soon"/);
  }, 30_000);

  it('guesses an option cut short or misspelt among the options of the command it was given to', () => {
    const cut = hcs25(['run', '--max-fee', '3']);
    expect(cut.status).toBe(2);
    expect(cut.stderr).toMatch(/unknown option '--max-fee'\n\(Did you mean --max-fee-hbar\?\)/);
    expect(hcs25(['watch', '--max-fee', '3']).stderr).toMatch(/Did you mean --max-fee-per-day\?/);
    expect(hcs25(['run', '--zzz']).stderr).not.toMatch(/Did you mean/);
  });
});

/**
 * `hcs25 --help` must start fast, so the modules it loads statically must not pull in the Hedera SDK, the
 * standards-sdk or servers: those are imported inside the commands that need them.
 */
describe('cold start', () => {
  const HEAVY =
    /^(@hashgraph\/|@hashgraphonline\/|@grpc\/|@a2a-js\/|@modelcontextprotocol\/|@electric-sql\/|pg$|express$|playwright-core$|undici$)/;

  function staticImports(file: string): string[] {
    const text = readFileSync(file, 'utf8');
    // Only top-level static imports; `await import(...)` inside actions is the intended lazy path.
    return [
      ...text.matchAll(/^(?:import|export)\s[^;]*?from\s+['"]([^'"]+)['"]/gm),
      ...text.matchAll(/^import\s+['"]([^'"]+)['"]/gm),
    ].map((m) => m[1]!);
  }

  it('the CLI entry point reaches no heavy dependency through static imports', () => {
    const seen = new Set<string>();
    const heavy: string[] = [];
    const queue = [main];
    while (queue.length > 0) {
      const file = queue.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const spec of staticImports(file)) {
        if (spec.startsWith('.')) queue.push(resolve(dirname(file), spec));
        else if (HEAVY.test(spec)) heavy.push(`${file.slice(root.length + 1)} → ${spec}`);
      }
    }
    expect(seen.size).toBeGreaterThan(5);
    expect(heavy).toEqual([]);
  });
});
