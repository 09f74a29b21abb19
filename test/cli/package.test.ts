/**
 * The npm package as users get it: packed from the sources (prepack builds dist/ afresh, without source maps whose
 * sources are not shipped), unpacked into an empty folder as npm installs it, and run from there with no repository
 * beside it. Dependencies are linked from this clone's node_modules: the tests never reach the registry.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'hcs25-package-'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let files: string[] = [];
let installed = '';

beforeAll(() => {
  // A copy of what `npm pack` reads, so building it leaves this clone's dist/ alone while other tests use it.
  const source = join(work, 'source');
  for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'README.md', 'LICENSE'])
    cpSync(join(root, entry), join(source, entry));
  for (const dir of ['src', 'bin', 'schemas', 'data']) cpSync(join(root, dir), join(source, dir), { recursive: true });
  symlinkSync(join(root, 'node_modules'), join(source, 'node_modules'), 'junction');
  const out = execFileSync(npm, ['pack', '--json', '--pack-destination', work], {
    cwd: source,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [packed] = JSON.parse(out.slice(out.indexOf('['))) as Array<{ filename: string; files: { path: string }[] }>;
  files = packed!.files.map((f) => f.path);

  // As `npm install hcs25` lays it out: the package in node_modules/hcs25, its dependencies beside it.
  const modules = join(work, 'app', 'node_modules');
  mkdirSync(modules, { recursive: true });
  execFileSync('tar', ['-xzf', join(work, packed!.filename), '-C', modules]);
  installed = join(modules, 'hcs25');
  cpSync(join(modules, 'package'), installed, { recursive: true });
  rmSync(join(modules, 'package'), { recursive: true });
  for (const dep of readdirSync(join(root, 'node_modules'))) {
    if (dep === '.bin' || dep === 'hcs25') continue;
    symlinkSync(join(root, 'node_modules', dep), join(modules, dep), 'junction');
  }
}, 240_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

function hcs25(args: string[]) {
  return spawnSync(process.execPath, [join(installed, 'bin', 'hcs25'), ...args], {
    cwd: join(work, 'app'),
    encoding: 'utf8',
    timeout: 120_000,
    // No network configured from this clone's environment: the demo brings its own node.
    env: { PATH: process.env.PATH ?? '', HOME: join(work, 'home'), HCS25_STATE_DIR: join(work, 'state') },
  });
}

describe('the npm package', () => {
  it('ships the built CLI, its data and schemas, and no tests, sources or source maps', () => {
    for (const needed of [
      'bin/hcs25',
      'dist/cli/main.js',
      'dist/index.js',
      'dist/index.d.ts',
      'data/science-bank.json',
    ])
      expect(files).toContain(needed);
    expect(files.some((f) => f.startsWith('schemas/'))).toBe(true);
    expect(files.filter((f) => f.endsWith('.map') || f.startsWith('src/') || f.startsWith('test/'))).toEqual([]);
  });

  it('runs hcs25 --help and hcs25 demo --fast from an installed copy', () => {
    const help = hcs25(['--help']);
    expect(help.stderr).toBe('');
    expect(help.stdout).toMatch(/Usage: hcs25/);
    const demo = hcs25(['demo', '--fast', '--ports', 'ephemeral', '--no-html']);
    expect(demo.stderr).not.toMatch(/Error|ERR_/);
    expect(demo.status).toBe(0);
    expect(demo.stdout).toMatch(/trust/i);
  }, 150_000);
});
