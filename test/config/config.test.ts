import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { LOCAL_GENESIS_OPERATOR, loadConfig, requireOperator } from '../../src/config/index.js';
import { createClient, parsePrivateKey } from '../../src/hedera/client.js';

const KEY = `302e020100300506032b657004220420${'ab'.repeat(32)}`;

function dir(files: Record<string, string> = {}): string {
  const d = mkdtempSync(join(tmpdir(), 'hcs25-config-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(d, name), text);
  return d;
}

describe('loadConfig', () => {
  it('defaults to the local network and its genesis operator', () => {
    const c = loadConfig({ env: {}, cwd: dir() });
    expect(c.network).toEqual({
      ledger: 'local',
      nodes: { '127.0.0.1:50211': '0.0.3' },
      mirrorGrpc: ['127.0.0.1:5600'],
      mirrorRestUrl: 'http://127.0.0.1:5551',
    });
    expect(c.operator?.accountId).toBe('0.0.2');
    expect(c.operator?.privateKey.reveal()).toBe(LOCAL_GENESIS_OPERATOR.privateKey);
    expect(c.allowPrivateEndpoints).toBe(true);
    expect(c.concurrency).toBe(16);
    expect(c.budgetMs).toBe(30_000);
  });

  it('solo: a local ledger at the ports of a default Solo deployment, with the genesis operator; ports can be moved', () => {
    const c = loadConfig({ env: { HCS25_NETWORK: 'solo' }, cwd: dir() });
    expect(c.network).toEqual({
      ledger: 'local',
      nodes: { '127.0.0.1:35211': '0.0.3' },
      mirrorGrpc: ['127.0.0.1:38081'],
      mirrorRestUrl: 'http://127.0.0.1:38081',
    });
    expect(c.operator?.accountId).toBe(LOCAL_GENESIS_OPERATOR.accountId);
    expect(c.allowPrivateEndpoints).toBe(true);
    const moved = loadConfig({
      env: { HCS25_NETWORK: 'solo', HCS25_MIRROR_REST_URL: 'http://127.0.0.1:8081' },
      cwd: dir(),
    });
    expect(moved.network.mirrorRestUrl).toBe('http://127.0.0.1:8081');
    expect(moved.network.nodes).toEqual({ '127.0.0.1:35211': '0.0.3' });
  });

  it('has no operator on public networks unless one is configured, and says how to set one', () => {
    const c = loadConfig({ env: { HCS25_NETWORK: 'testnet' }, cwd: dir() });
    expect(c.operator).toBeUndefined();
    expect(c.allowPrivateEndpoints).toBe(false);
    expect(c.network.mirrorRestUrl).toBe('https://testnet.mirrornode.hedera.com');
    expect(() => requireOperator(c)).toThrow(/HCS25_OPERATOR_ID/);
  });

  it('applies flags > environment > .env > config file > defaults', () => {
    const cwd = dir({
      'hcs25.config.json': JSON.stringify({ concurrency: 3, budgetMs: 1000, maxFeeHbar: 2, stateDir: 'from-file' }),
      '.env': 'HCS25_BUDGET_MS=2000\nHCS25_MAX_FEE_HBAR=7\nHCS25_CONCURRENCY=5\n',
    });
    const c = loadConfig({ env: { HCS25_CONCURRENCY: '8' }, flags: { budgetMs: 4000 }, cwd });
    expect(c.budgetMs).toBe(4000);
    expect(c.concurrency).toBe(8);
    expect(c.maxFeeHbar).toBe(7);
    expect(c.stateDir).toBe(join(cwd, 'from-file'));
    expect(c.sources).toMatchObject({ budgetMs: 'flag', concurrency: 'env', maxFeeHbar: 'env', stateDir: 'file' });
  });

  it('reads a custom network from HCS25_NODES and HCS25_MIRROR_REST_URL', () => {
    const c = loadConfig({
      env: {
        HCS25_NETWORK: 'custom',
        HCS25_NODES: '10.0.0.5:50211=0.0.3, 10.0.0.6:50211=0.0.4',
        HCS25_MIRROR_REST_URL: 'http://10.0.0.5:5551/api/v1/',
      },
      cwd: dir(),
    });
    expect(c.network.nodes).toEqual({ '10.0.0.5:50211': '0.0.3', '10.0.0.6:50211': '0.0.4' });
    expect(c.network.mirrorRestUrl).toBe('http://10.0.0.5:5551');
    expect(() => loadConfig({ env: { HCS25_NETWORK: 'custom' }, cwd: dir() })).toThrow(/HCS25_NODES/);
  });

  it.each([
    [{ HCS25_NETWORK: 'moonnet' }, /HCS25_NETWORK/],
    [{ HCS25_CONCURRENCY: 'lots' }, /HCS25_CONCURRENCY must be a number/],
    [{ HCS25_CONCURRENCY: '0' }, /HCS25_CONCURRENCY/],
    [{ HCS25_OPERATOR_ID: 'alice', HCS25_OPERATOR_KEY: KEY }, /HCS25_OPERATOR_ID/],
    [{ HCS25_OPERATOR_ID: '0.0.5' }, /no operator key/],
    [{ HCS25_ALLOW_PRIVATE_ENDPOINTS: 'maybe' }, /HCS25_ALLOW_PRIVATE_ENDPOINTS must be true or false/],
    [{ HCS25_MIRROR_REST_URL: 'ftp://x' }, /HCS25_MIRROR_REST_URL/],
    [{ HCS25_OPERATOR_ID: '0.0.5', HCS25_OPERATOR_KEY: 'ab'.repeat(32) }, /HCS25_OPERATOR_KEY_TYPE/],
  ])('rejects %j naming the variable', (env, message) => {
    expect(() => loadConfig({ env, cwd: dir() })).toThrow(ConfigError);
    expect(() => loadConfig({ env, cwd: dir() })).toThrow(message);
  });

  it('HCS25_RETRY_FOR (or --retry-for, or "retryFor") sets how long run waits out a busy network; default 5m', () => {
    expect(loadConfig({ env: {}, cwd: dir() }).retryForMs).toBe(300_000);
    expect(loadConfig({ env: { HCS25_RETRY_FOR: '30m' }, cwd: dir() }).retryForMs).toBe(1_800_000);
    expect(loadConfig({ env: { HCS25_RETRY_FOR: '30m' }, flags: { retryFor: '90s' }, cwd: dir() }).retryForMs).toBe(
      90_000,
    );
    expect(() => loadConfig({ env: { HCS25_RETRY_FOR: 'soon' }, cwd: dir() })).toThrow(
      /HCS25_RETRY_FOR.*must be a duration like 90s, 30m/,
    );
  });

  it('rejects unknown and invalid config-file keys, naming them', () => {
    expect(() => loadConfig({ env: {}, cwd: dir({ 'hcs25.config.json': '{"concurency": 3}' }) })).toThrow(
      /unknown key.*concurency/,
    );
    expect(() => loadConfig({ env: {}, cwd: dir({ 'hcs25.config.json': '{"budgetMs": "soon"}' }) })).toThrow(
      /config file key "budgetMs"/,
    );
    expect(() => loadConfig({ env: {}, cwd: dir({ 'hcs25.config.json': '{oops' }) })).toThrow(/not valid JSON/);
    // Inside an object, the entry at fault.
    expect(() =>
      loadConfig({ env: {}, cwd: dir({ 'hcs25.config.json': '{"agentHeaders": {"agent-1": 5}}' }) }),
    ).toThrow(/^config file key "agentHeaders\.agent-1": /);
    expect(() => loadConfig({ env: {}, flags: { config: 'missing.json' }, cwd: dir() })).toThrow(/does not exist/);
  });

  it('names a bad value by the flag the user typed', () => {
    expect(() => loadConfig({ env: {}, flags: { publishers: ['bad'] }, cwd: dir() })).toThrow(/^--publisher: /);
    expect(() => loadConfig({ env: { HCS25_PUBLISHERS: 'bad' }, cwd: dir() })).toThrow(/^HCS25_PUBLISHERS: /);
    expect(() => loadConfig({ env: {}, flags: { budgetMs: -1 }, cwd: dir() })).toThrow(/^--budget-ms: /);
  });

  it('reads the operator key from a file', () => {
    const cwd = dir({ 'op.key': `${KEY}\n` });
    const c = loadConfig({
      env: { HCS25_NETWORK: 'testnet', HCS25_OPERATOR_ID: '0.0.1234', HCS25_OPERATOR_KEY_FILE: 'op.key' },
      cwd,
    });
    expect(c.operator?.privateKey.reveal()).toBe(KEY);
  });
});

describe('the operator key never leaks', () => {
  const env = { HCS25_NETWORK: 'testnet', HCS25_OPERATOR_ID: '0.0.1234', HCS25_OPERATOR_KEY: KEY };

  it('is redacted in JSON, string conversion and inspect', () => {
    const c = loadConfig({ env, cwd: dir() });
    for (const text of [
      JSON.stringify(c),
      inspect(c, { depth: 10 }),
      `${c.operator?.privateKey}`,
      String(c.operator?.privateKey),
    ]) {
      expect(text).not.toContain(KEY);
      expect(text).not.toContain('ab'.repeat(32));
    }
    expect(JSON.stringify(c)).toContain('[redacted]');
  });

  it('is not in error messages for malformed keys', () => {
    const bad = `302e0201003005${'zz'.repeat(20)}`;
    let message = '';
    try {
      loadConfig({ env: { ...env, HCS25_OPERATOR_KEY: bad }, cwd: dir() });
    } catch (err) {
      message = `${(err as Error).message} ${(err as ConfigError).hint}`;
    }
    expect(message).toMatch(/not hex/);
    expect(message).not.toContain(bad);

    const unparsable = `30${'ab'.repeat(40)}`;
    const c = loadConfig({ env: { ...env, HCS25_OPERATOR_KEY: unparsable }, cwd: dir() });
    let parseMessage = '';
    try {
      parsePrivateKey(c.operator!);
    } catch (err) {
      parseMessage = `${(err as Error).message} ${(err as ConfigError).hint} ${String((err as Error).cause ?? '')}`;
    }
    expect(parseMessage).toMatch(/could not be parsed/);
    expect(parseMessage).not.toContain(unparsable);
  });

  it('is not in a validation error from a config file', () => {
    const cwd = dir({ 'hcs25.config.json': JSON.stringify({ operatorKey: '', operatorId: '0.0.5' }) });
    let message = '';
    try {
      loadConfig({ env: {}, cwd });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/operatorKey.*not a valid value/);
  });

  it('builds an SDK client with the operator set', () => {
    const c = loadConfig({ env: {}, cwd: dir() });
    const client = createClient(c);
    expect(client.operatorAccountId?.toString()).toBe('0.0.2');
    expect(inspect(client.operatorPublicKey)).not.toContain(LOCAL_GENESIS_OPERATOR.privateKey);
    client.close();
  });
});
