/**
 * A private key typed into a flag that a command checks itself (not through the configuration) is never echoed by
 * the real CLI: the usage error names the flag and quotes nothing that could be a key. Needs a build first.
 * Passes once src/cli/shared.ts runs error lines and notes through redactKeyMaterial (or each site uses quoteInput).
 */
import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PrivateKey } from '@hashgraph/sdk';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const main = resolve(root, 'dist/cli/main.js');
const key = PrivateKey.generateED25519();
const FORMS = {
  'DER hex': key.toStringDer(),
  'raw hex 0x': `0x${key.toStringRaw()}`,
  'DER base64': Buffer.from(key.toStringDer(), 'hex').toString('base64'),
};
/** Every 12-character window of the key's hex and base64 forms. */
const FRAGMENTS = [
  key.toStringDer(),
  key.toStringRaw(),
  Buffer.from(key.toStringRaw(), 'hex').toString('base64'),
  Buffer.from(key.toStringDer(), 'hex').toString('base64'),
].flatMap((f) =>
  Array.from({ length: Math.floor((f.length - 12) / 3) + 1 }, (_, i) => f.slice(i * 3, i * 3 + 12).toLowerCase()),
);

function hcs25(args: string[]): Promise<{ out: string; code: number }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HCS25_')));
  return new Promise((done) => {
    execFile(
      process.execPath,
      [main, ...args],
      { cwd: root, encoding: 'utf8', env: { ...env, HCS25_NETWORK: 'local' }, timeout: 30_000 },
      (err, stdout, stderr) => {
        done({ out: `${stdout}${stderr}`, code: err ? Number((err as { code?: number }).code ?? 1) : 0 });
      },
    );
  });
}

const FLAGS: Record<string, { args: (k: string) => string[]; names: RegExp }> = {
  'eval --account': { args: (k) => ['eval', '--protocol', 'hcs-10', '--account', k], names: /--account/ },
  'eval --inbound': { args: (k) => ['eval', '--protocol', 'hcs-10', '--inbound', k], names: /--inbound/ },
  'eval --endpoint': { args: (k) => ['eval', '--protocol', 'openai', '--endpoint', k], names: /--endpoint/ },
  'eval --protocol': {
    args: (k) => ['eval', '--protocol', k, '--endpoint', 'http://127.0.0.1:9/v1'],
    names: /--protocol/,
  },
  'eval --budget-ms': {
    args: (k) => ['eval', '--protocol', 'openai', '--endpoint', 'http://127.0.0.1:9/v1', '--budget-ms', k],
    names: /--budget-ms/,
  },
  'discover --registry': { args: (k) => ['discover', '--registry', k], names: /registry/ },
  'registry register --account': {
    args: (k) => ['registry', 'register', '--registry', '0.0.5', '--account', k],
    names: /--account/,
  },
  'scores --score-topic': { args: (k) => ['scores', '--topic', '0.0.5', '--score-topic', k], names: /--score-topic/ },
  'signals --since': { args: (k) => ['signals', '--topic', '0.0.5', '--since', k], names: /--since/ },
  'grade --expected': {
    args: (k) => ['grade', '--eval', 'math', '--response', '42', '--expected', k],
    names: /--expected/,
  },
};

// Each case is its own process: they run concurrently.
describe.concurrent.each(Object.entries(FORMS))('a key (%s) in a flag the command checks itself', (_form, encoded) => {
  it.each(Object.keys(FLAGS))('%s: the key not echoed; a usage error names the flag', async (name) => {
    const { args, names } = FLAGS[name]!;
    const { out, code } = await hcs25(args(encoded));
    // Some commands accept the value (`0x…` is a number to `grade --expected`) or fail later; none may echo it.
    if (code === 2) expect(out).toMatch(names);
    const lower = out.toLowerCase();
    expect(
      FRAGMENTS.find((f) => lower.includes(f)),
      out,
    ).toBeUndefined();
  });
});
