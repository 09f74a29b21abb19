/**
 * bin/hcs25, the installed command: how it starts node. A stand-in `node` first on PATH prints the arguments it is
 * given, so the test sees the exact command line without running the CLI.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const bin = resolve(import.meta.dirname, '../../bin/hcs25');
const dir = mkdtempSync(join(tmpdir(), 'hcs25-launcher-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'node'), '#!/bin/sh\necho "MALLOC_ARENA_MAX=${MALLOC_ARENA_MAX:-unset}"\nfor a in "$@"; do echo "$a"; done\n');
chmodSync(join(dir, 'node'), 0o755);

/** The stand-in's output: MALLOC_ARENA_MAX as node saw it, then node's arguments. */
function nodeArgs(args: string[], env: Record<string, string> = {}): string[] {
  const { MALLOC_ARENA_MAX: _, ...inherited } = process.env;
  const r = spawnSync(bin, args, { env: { ...inherited, PATH: `${dir}:${process.env.PATH ?? ''}`, ...env }, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trimEnd().split('\n');
}

describe('bin/hcs25', () => {
  it('runs `watch` with a young generation of two 4 MB semi-spaces, old space grown by 20% a GC and two malloc arenas', () => {
    const args = nodeArgs(['watch', '--registry', '0.0.1']);
    expect(args[0]).toBe('MALLOC_ARENA_MAX=2');
    expect(args.slice(1, 3)).toEqual(['--max-semi-space-size=4', '--heap-growing-percent=20']);
    expect(args[3]).toMatch(/dist\/cli\/main\.js$/);
    expect(args.slice(4)).toEqual(['--', 'watch', '--registry', '0.0.1']);
  });

  it('keeps a MALLOC_ARENA_MAX the caller set', () => {
    expect(nodeArgs(['watch'], { MALLOC_ARENA_MAX: '4' })[0]).toBe('MALLOC_ARENA_MAX=4');
  });

  it('runs every other command with node as it is', () => {
    const args = nodeArgs(['run', 'watch']);
    expect(args[0]).toBe('MALLOC_ARENA_MAX=unset');
    expect(args[1]).toMatch(/dist\/cli\/main\.js$/);
    expect(args.slice(2)).toEqual(['--', 'run', 'watch']);
  });
});
