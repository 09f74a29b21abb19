/**
 * bin/hcs25, the installed command: a JavaScript file that npm's shims (a symlink on Linux and macOS, a .cmd file on
 * Windows) and `node bin/hcs25` start alike, with no node flags of its own.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/hcs25');
const cwd = mkdtempSync(join(tmpdir(), 'hcs25-launcher-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
// No network configured: anything that reached for one would fail differently.
const env = {
  ...process.env,
  HCS25_NETWORK: 'custom',
  HCS25_NODES: '127.0.0.1:1=0.0.3',
  HCS25_MIRROR_REST_URL: 'http://127.0.0.1:1',
};

function node(args: string[]) {
  return spawnSync(process.execPath, [bin, ...args], { cwd, env, encoding: 'utf8' });
}

describe('bin/hcs25', () => {
  it('runs with `node bin/hcs25`', () => {
    const r = node(['--version']);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(version);
    expect(r.status).toBe(0);
  });

  it('runs by itself through its #!/usr/bin/env node line, as npm links it', () => {
    const r = spawnSync(bin, ['--help'], { cwd, env, encoding: 'utf8' });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Usage: hcs25/);
  });

  it('is a module node reads without flags: no V8 options, no shell', () => {
    const text = readFileSync(bin, 'utf8');
    expect(text.startsWith('#!/usr/bin/env node\n')).toBe(true);
    expect(text).toMatch(/^import '\.\.\/dist\/cli\/main\.js';$/m);
    expect(text).not.toMatch(/--max-semi-space-size|--heap-growing-percent|MALLOC_ARENA_MAX|exec /);
  });

  it('reads environment variables from the file --dotenv names', () => {
    writeFileSync(join(cwd, 'bad-network.env'), 'HCS25_NETWORK=nonsense\n');
    const { HCS25_NETWORK: _, ...inherited } = env;
    const args = [bin, '--dotenv', 'bad-network.env', 'signals', '--topic', '0.0.5'];
    const r = spawnSync(process.execPath, args, { cwd, env: inherited, encoding: 'utf8' });
    expect(r.stderr).toMatch(/^hcs25: HCS25_NETWORK: "nonsense" is not one of local, solo, testnet/);
    expect(r.status).toBe(2);
  });

  it('says in one line that a --dotenv file is missing (exit 2)', () => {
    const r = node(['--dotenv', 'missing.env', 'signals', '--topic', '0.0.5']);
    expect(r.stderr).toMatch(/^hcs25: env file ".*missing\.env" does not exist\n {2}hint: check --dotenv\n$/);
    expect(r.status).toBe(2);
  });

  it('explains --env-file in the help, and refuses it with a pointer to --dotenv', () => {
    expect(node(['--help']).stdout).toMatch(/--dotenv, not --env-file: Node reads --env-file itself/);
    // An existing file: Node 20 checks it exists, then leaves the argument to the script.
    writeFileSync(join(cwd, 'empty.env'), '');
    const r = node(['--env-file', 'empty.env', 'signals', '--topic', '0.0.5']);
    expect(r.stderr).toMatch(/^hcs25: use --dotenv FILE/);
    expect(r.status).toBe(2);
  });
});
