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
writeFileSync(join(dir, 'node'), '#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n');
chmodSync(join(dir, 'node'), 0o755);

function nodeArgs(args: string[]): string[] {
  const r = spawnSync(bin, args, { env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` }, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout.trimEnd().split('\n');
}

describe('bin/hcs25', () => {
  it('runs `watch` with a young generation of two 4 MB semi-spaces', () => {
    const args = nodeArgs(['watch', '--registry', '0.0.1']);
    expect(args[0]).toBe('--max-semi-space-size=4');
    expect(args[1]).toMatch(/dist\/cli\/main\.js$/);
    expect(args.slice(2)).toEqual(['--', 'watch', '--registry', '0.0.1']);
  });

  it('runs every other command with node as it is', () => {
    const args = nodeArgs(['run', 'watch']);
    expect(args[0]).toMatch(/dist\/cli\/main\.js$/);
    expect(args.slice(1)).toEqual(['--', 'run', 'watch']);
  });
});
