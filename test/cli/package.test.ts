/**
 * The npm package as users get it: packed from the sources (prepack builds dist/ afresh, without source maps whose
 * sources are not shipped), unpacked into an empty folder as npm installs it, and run from there with no repository
 * beside it. Dependencies are linked from this clone's node_modules: the tests never reach the registry.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
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
  // npm's own bin linking (a symlink, or .cmd/.ps1 shims on Windows) makes the `hcs25` command, as install does.
  execFileSync(npm, ['rebuild', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', 'hcs25'], {
    cwd: join(work, 'app'),
    stdio: 'ignore',
    shell: process.platform === 'win32',
  });
}, 240_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** `hcs25 …` as a user types it once the package is installed: npm's shim found on PATH. */
function hcs25(args: string[]) {
  const bin = join(work, 'app', 'node_modules', '.bin');
  return spawnSync('hcs25', args, {
    cwd: work,
    encoding: 'utf8',
    timeout: 120_000,
    shell: process.platform === 'win32',
    // No network configured from this clone's environment: the demo brings its own node.
    env: {
      PATH: `${bin}${delimiter}${process.env.PATH ?? ''}`,
      HOME: join(work, 'home'),
      HCS25_STATE_DIR: join(work, 'state'),
    },
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

  it('links the hcs25 command to the shipped bin, which runs with node as well', () => {
    expect(realpathSync(join(work, 'app', 'node_modules', '.bin', 'hcs25'))).toBe(
      realpathSync(join(installed, 'bin', 'hcs25')),
    );
    const direct = spawnSync(process.execPath, [join(installed, 'bin', 'hcs25'), '--version'], { encoding: 'utf8' });
    expect(direct.status).toBe(0);
    expect(direct.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
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
