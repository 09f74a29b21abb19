/**
 * `hcs25 serve`'s admin token (the webhook API) is read from --admin-token-file or HCS25_SERVE_ADMIN_TOKEN and never
 * echoed: a weak or doubly given token is a usage error that names where it came from, not the value. The real CLI;
 * needs a build first.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const main = resolve(root, 'dist/cli/main.js');
const dir = mkdtempSync(join(tmpdir(), 'hcs25-admin-token-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function serve(args: string[], env: Record<string, string> = {}): Promise<{ out: string; code: number }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HCS25_')));
  return new Promise((done) => {
    execFile(
      process.execPath,
      [main, 'serve', '--topic', '0.0.1234', '--database', 'memory://', '--port', '0', ...args],
      { cwd: dir, encoding: 'utf8', env: { ...base, HCS25_NETWORK: 'local', ...env }, timeout: 30_000 },
      (err, stdout, stderr) =>
        done({ out: `${stdout}${stderr}`, code: err ? Number((err as { code?: number }).code ?? 1) : 0 }),
    );
  });
}

describe.concurrent('hcs25 serve admin token', () => {
  it('refuses a short token from a file without echoing it', async () => {
    const file = join(dir, 'short');
    writeFileSync(file, 'tooShort-k3y\n');
    const { out, code } = await serve(['--admin-token-file', file]);
    expect(code).toBe(2);
    expect(out).toContain('the admin token must be at least 16');
    expect(out).not.toContain('tooShort-k3y');
  });

  it('refuses a token with a space from the environment without echoing it', async () => {
    const { out, code } = await serve([], { HCS25_SERVE_ADMIN_TOKEN: 'spaced token-0123456789' });
    expect(code).toBe(2);
    expect(out).toContain('printable ASCII characters without spaces');
    expect(out).not.toContain('token-0123456789');
  });

  it('refuses a token given twice, and an unreadable file', async () => {
    const file = join(dir, 'ok');
    writeFileSync(file, 'a-good-admin-token-0123456789');
    const both = await serve(['--admin-token-file', file], { HCS25_SERVE_ADMIN_TOKEN: 'other-admin-token-0123456789' });
    expect([both.code, both.out]).toEqual([2, expect.stringContaining('both --admin-token-file and')]);
    expect(both.out).not.toMatch(/a-good-admin-token|other-admin-token/);
    const missing = await serve(['--admin-token-file', join(dir, 'missing')]);
    expect([missing.code, missing.out]).toEqual([
      2,
      expect.stringContaining('--admin-token-file: cannot read the file'),
    ]);
  });
});
