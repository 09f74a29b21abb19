/**
 * The README's library example is this repository's examples/library.mjs, word for word, and it works: run as a user
 * would (the built package, `hcs25` resolved through package.json "exports"), in an empty directory.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
const example = join(root, 'examples/library.mjs');
const cwd = mkdtempSync(join(tmpdir(), 'hcs25-example-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

describe('README library example', () => {
  it('is the README text, verbatim', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme).toContain(readFileSync(example, 'utf8').trim());
  });

  it('discovers, evaluates and publishes against the embedded local node', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [example], { cwd, timeout: 120_000 });
    // 2 agents × (availability, math), every signal on the topic.
    expect(stdout).toMatch(/^complete: 4 signals on topic \d+\.\d+\.\d+$/m);
  });
});
