/**
 * A private key in the wrong place is never echoed: a table of misplacements (variables, flags, config file keys,
 * .env, the key file's path variable) × encodings (DER/raw hex with and without 0x, base64, base64url, PEM) ×
 * key types. The error names the variable, flag or file key at fault and never quotes the value; checked on the
 * thrown errors (message and hint) and on stdout/stderr of the real CLI (dist/cli/main.js, text and --json).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PrivateKey } from '@hashgraph/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { mayBeKeyMaterial, quoteInput, redactKeyMaterial } from '../../src/config/secret.js';
import { Hcs25Error } from '../../src/core/errors.js';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { parseRegistryId } from '../../src/discover/discover.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const main = resolve(root, 'dist/cli/main.js');

const KEYS = { ed25519: PrivateKey.generateED25519(), ecdsa: PrivateKey.generateECDSA() };

function encodings(key: PrivateKey): Record<string, string> {
  const der = key.toStringDer();
  const raw = key.toStringRaw();
  const derB64 = Buffer.from(der, 'hex').toString('base64');
  return {
    'DER hex': der,
    'DER hex 0x': `0x${der}`,
    'raw hex': raw,
    'raw hex 0x': `0x${raw}`,
    'raw HEX upper': raw.toUpperCase(),
    'DER base64': derB64,
    'raw base64url': Buffer.from(raw, 'hex').toString('base64url'),
    PEM: `-----BEGIN PRIVATE KEY-----\n${derB64}\n-----END PRIVATE KEY-----`,
  };
}

/** Every 12-character window of every encoding of `key`: none may appear in any output. */
function fragmentsOf(key: PrivateKey): string[] {
  const der = key.toStringDer();
  const raw = key.toStringRaw();
  const forms = [
    der,
    raw,
    ...[der, raw].flatMap((h) => [
      Buffer.from(h, 'hex').toString('base64'),
      Buffer.from(h, 'hex').toString('base64url'),
    ]),
  ];
  const out = new Set<string>();
  for (const form of forms) for (let i = 0; i + 12 <= form.length; i += 3) out.add(form.slice(i, i + 12).toLowerCase());
  return [...out];
}

function expectNoKey(text: string, key: PrivateKey, what: string): void {
  const lower = text.toLowerCase();
  const leaked = fragmentsOf(key).find((f) => lower.includes(f));
  expect(leaked, `${what} leaks key material: ${text}`).toBeUndefined();
}

interface Case {
  /** What the error must name. */
  names: RegExp;
  env?: Record<string, string>;
  flags?: Record<string, string>;
  /** hcs25.config.json contents (raw text). */
  configFile?: (key: string) => string;
  dotEnv?: (key: string) => string;
  /** CLI flags for the same misplacement. */
  cliArgs?: (key: string) => string[];
}

const ID = { HCS25_OPERATOR_ID: '0.0.1001' };
const CASES: Record<string, (key: string) => Case> = {
  'the key itself in HCS25_OPERATOR_KEY_FILE': (key) => ({
    names: /HCS25_OPERATOR_KEY_FILE/,
    env: { ...ID, HCS25_OPERATOR_KEY_FILE: key },
  }),
  'the key in HCS25_OPERATOR_ID': (key) => ({
    names: /HCS25_OPERATOR_ID/,
    env: { HCS25_OPERATOR_ID: key, HCS25_OPERATOR_KEY: KEYS.ed25519.toStringDer() },
  }),
  'the key in HCS25_NETWORK': (key) => ({ names: /HCS25_NETWORK/, env: { HCS25_NETWORK: key } }),
  'the key in HCS25_STATE_DIR': (key) => ({ names: /HCS25_STATE_DIR/, env: { HCS25_STATE_DIR: key } }),
  'the key in HCS25_TOPIC': (key) => ({ names: /HCS25_TOPIC/, env: { HCS25_TOPIC: key }, cliArgs: () => ['signals'] }),
  'the key in HCS25_NODES': (key) => ({ names: /HCS25_NODES/, env: { HCS25_NETWORK: 'custom', HCS25_NODES: key } }),
  'the key in HCS25_MAX_FEE_HBAR': (key) => ({ names: /HCS25_MAX_FEE_HBAR/, env: { HCS25_MAX_FEE_HBAR: key } }),
  'the key in HCS25_ALLOW_PRIVATE_ENDPOINTS': (key) => ({
    names: /HCS25_ALLOW_PRIVATE_ENDPOINTS/,
    env: { HCS25_ALLOW_PRIVATE_ENDPOINTS: key },
  }),
  'the key in HCS25_PUBLISHERS': (key) => ({ names: /HCS25_PUBLISHERS/, env: { HCS25_PUBLISHERS: key } }),
  'the key in HCS25_OPERATOR_KEY_TYPE': (key) => ({
    names: /HCS25_OPERATOR_KEY_TYPE/,
    env: { HCS25_OPERATOR_KEY_TYPE: key },
  }),
  'the key in HCS25_MIRROR_REST_URL': (key) => ({
    names: /HCS25_MIRROR_REST_URL/,
    env: { HCS25_MIRROR_REST_URL: key },
  }),
  'the key in HCS25_CONFIG': (key) => ({ names: /config file/, env: { HCS25_CONFIG: key } }),
  'the key as --network': (key) => ({ names: /--network/, flags: { network: key }, cliArgs: () => ['--network', key] }),
  'the key as --config': (key) => ({ names: /config file/, flags: { config: key }, cliArgs: () => ['--config', key] }),
  'the key as --dotenv': (key) => ({ names: /env file/, flags: { envFile: key }, cliArgs: () => ['--dotenv', key] }),
  'the key as the signals --topic flag': (key) => ({
    names: /--topic/,
    flags: { topic: key },
    cliArgs: () => ['signals', '--topic', key],
  }),
  'the key as config file "operatorId"': (key) => ({
    names: /config file key \\?"operatorId/,
    configFile: () => JSON.stringify({ operatorId: key }),
  }),
  'the key as config file "network"': (key) => ({
    names: /config file key \\?"network/,
    configFile: () => JSON.stringify({ network: key }),
  }),
  'the key as a config file key name': (key) => ({
    names: /config file key name/,
    configFile: () => JSON.stringify({ [key]: true }),
  }),
  'the key in a broken config file': (key) => ({
    names: /config file .*not valid JSON/,
    configFile: () => `{"operatorKey": ${key}}`,
  }),
  'the key as HCS25_OPERATOR_ID in .env': (key) => ({
    names: /HCS25_OPERATOR_ID/,
    dotEnv: () => `HCS25_OPERATOR_ID=${JSON.stringify(key)}\nHCS25_OPERATOR_KEY=${KEYS.ed25519.toStringDer()}\n`,
  }),
  'the key as HCS25_OPERATOR_KEY_FILE in .env': (key) => ({
    names: /HCS25_OPERATOR_KEY_FILE/,
    dotEnv: () => `HCS25_OPERATOR_ID=0.0.1001\nHCS25_OPERATOR_KEY_FILE=${JSON.stringify(key)}\n`,
  }),
};

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'hcs25-secrets-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A fresh working directory holding the case's config file and .env. */
function setUp(c: Case, key: string, name: string): string {
  const cwd = mkdtempSync(join(dir, `${name.replace(/[^a-z0-9]+/gi, '-')}-`));
  if (c.configFile) writeFileSync(join(cwd, 'hcs25.config.json'), c.configFile(key));
  if (c.dotEnv) writeFileSync(join(cwd, '.env'), c.dotEnv(key));
  return cwd;
}

describe('the key material detector', () => {
  it.each(Object.entries(encodings(KEYS.ecdsa)))('redacts a %s key wherever it stands in a line', (_form, value) => {
    const line = `hcs25: --account must be an id like 0.0.1234, got "${value}" (see 0.0.5)`;
    const redacted = redactKeyMaterial(line);
    expectNoKey(redacted, KEYS.ecdsa, 'redacted line');
    expect(redacted).toMatch(/^hcs25: --account must be an id like 0\.0\.1234, got "[^"]*\[redacted\]/);
    expect(redacted).toContain('(see 0.0.5)');
  });
  it('leaves ordinary error text alone', () => {
    const line =
      'hcs25: the mirror node at https://testnet.mirrornode.hedera.com does not know topic 0.0.1234 (HTTP 404)';
    expect(redactKeyMaterial(line)).toBe(line);
  });
  it.each(Object.entries(encodings(KEYS.ed25519)))('sees a key in %s form', (_form, value) => {
    expect(mayBeKeyMaterial(value)).toBe(true);
    expect(quoteInput(value)).not.toContain(value.slice(4, 16));
  });
  it.each([
    'testnet',
    '0.0.1234',
    '/home/alice/.hcs25/operator.key',
    'https://testnet.mirrornode.hedera.com',
    'yes',
    '16',
    'C:\\keys\\op.der',
    'uaid:aid:abc;uid=0',
  ])('quotes %s, which cannot be a key', (value) => {
    expect(mayBeKeyMaterial(value)).toBe(false);
    expect(quoteInput(value, 100)).toBe(`"${value}"`);
  });
});

describe.each(Object.entries(KEYS))('an %s key', (keyType, key) => {
  describe.each(Object.entries(encodings(key)))('encoded as %s', (_encoding, encoded) => {
    it.each(Object.keys(CASES))('%s: loadConfig names the culprit and never quotes it', (name) => {
      const c = CASES[name]!(encoded);
      const cwd = setUp(c, encoded, `${keyType}-${name}`);
      let error: unknown;
      try {
        loadConfig({ env: { ...c.env }, flags: { ...c.flags }, cwd });
      } catch (err) {
        error = err;
      }
      expect(error, name).toBeInstanceOf(Hcs25Error);
      const { message, hint } = error as Hcs25Error;
      expect(message).toMatch(c.names);
      expectNoKey(`${message}\n${hint ?? ''}\n${JSON.stringify(error)}\n${String((error as Error).stack)}`, key, name);
    });
  });
});

describe.each(Object.entries(encodings(KEYS.ecdsa)))(
  'library errors that quote what they were given (%s key)',
  (_form, encoded) => {
    const caught = async (fn: () => unknown): Promise<string> => {
      try {
        await fn();
      } catch (err) {
        return `${(err as Error).message}\n${(err as Hcs25Error).hint ?? ''}`;
      }
      throw new Error('no error');
    };
    it('a registry id', async () =>
      expectNoKey(await caught(() => parseRegistryId(encoded)), KEYS.ecdsa, 'parseRegistryId'));
    it('a mirror REST URL', async () =>
      expectNoKey(await caught(() => new MirrorRestClient({ baseUrl: encoded })), KEYS.ecdsa, 'mirror URL'));
    it('a topic and an account id asked of the mirror', async () => {
      const mirror = new MirrorRestClient({ baseUrl: 'http://127.0.0.1:9' });
      try {
        expectNoKey(await caught(() => mirror.getTopic(encoded)), KEYS.ecdsa, 'getTopic');
        expectNoKey(await caught(() => mirror.getAccount(encoded)), KEYS.ecdsa, 'getAccount');
      } finally {
        await mirror.close();
      }
    });
  },
);

function hcs25(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ stdout: string; stderr: string; code: number }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('HCS25_')));
  return new Promise((done) => {
    execFile(
      process.execPath,
      [main, ...args],
      { cwd, encoding: 'utf8', env: { ...clean, ...env }, timeout: 30_000 },
      (err, stdout, stderr) => {
        done({ stdout, stderr, code: err ? Number((err as { code?: number }).code ?? 1) : 0 });
      },
    );
  });
}

// Each case is its own process in its own directory: they run concurrently.
describe.concurrent('the real CLI', () => {
  const key = KEYS.ed25519;
  const forms = encodings(key);
  const table = Object.keys(CASES).flatMap((name) =>
    // Every encoding is covered through loadConfig above; here one hex and one PEM form, text and --json.
    [
      { name, form: 'DER hex', json: false },
      { name, form: 'PEM', json: true },
    ],
  );
  it.each(table)(
    '$name ($form, --json $json): exit 2, the culprit named, no key on stdout or stderr',
    async ({ name, form, json }) => {
      const encoded = forms[form]!;
      const c = CASES[name]!(encoded);
      const cwd = setUp(c, encoded, `cli-${name}-${form}`);
      const args = c.cliArgs?.(encoded) ?? [];
      const command = args.includes('signals') ? args : [...args, 'signals', '--topic', '0.0.5'];
      const out = await hcs25([...(json ? ['--json'] : []), ...command], cwd, c.env ?? {});
      expect(out.code, `${out.stdout}${out.stderr}`).toBe(2);
      expect(`${out.stdout}${out.stderr}`).toMatch(c.names);
      expectNoKey(out.stdout, key, 'stdout');
      expectNoKey(out.stderr, key, 'stderr');
    },
  );
});
