/** `hcs25 local-node` in-process: flags, --json output, faults from flags, clean stop on SIGTERM. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Command } from 'commander';
import { register } from '../../src/cli/local-node.js';
import { getJson } from '../localnode/helpers.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('hcs25 local-node', () => {
  it('prints ports, operator and accounts as JSON, serves, and stops on SIGTERM', async () => {
    // Only the command's own listeners may see the emitted signal.
    expect(process.listeners('SIGTERM')).toHaveLength(0);
    const out: string[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out.push(String(chunk));
      return true;
    });
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const program = new Command().option('--json').exitOverride();
    register(program);
    const done = program.parseAsync([
      'node',
      'hcs25',
      '--json',
      'local-node',
      '--port',
      '0',
      '--mirror-grpc-port',
      '0',
      '--mirror-rest-port',
      '0',
      '--accounts',
      '1',
      '--fault',
      'busy@getTopicInfo:1',
    ]);
    let printed:
      | {
          ports: { consensus: number; mirrorRest: number };
          mirrorRestUrl: string;
          operator: { accountId: string };
          accounts: unknown[];
        }
      | undefined;
    for (let i = 0; i < 200 && !printed; i++) {
      await new Promise((r) => setTimeout(r, 25));
      if (out.join('').trim().endsWith('}')) printed = JSON.parse(out.join(''));
    }
    expect(printed?.operator.accountId).toBe('0.0.2');
    expect(printed?.accounts).toHaveLength(3);
    expect(printed?.ports.consensus).toBeGreaterThan(0);
    const account = await getJson(`${printed!.mirrorRestUrl}/api/v1/accounts/0.0.1002`);
    expect(account.status).toBe(200);
    process.emit('SIGTERM');
    await done;
    expect(process.exitCode ?? 0).toBe(0);
    expect(process.listeners('SIGTERM')).toHaveLength(0);
    await expect(fetch(`${printed!.mirrorRestUrl}/api/v1/accounts/0.0.2`)).rejects.toThrow();
  });

  it('rejects a bad fault spec as a usage error', async () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const program = new Command().exitOverride();
    register(program);
    await program.parseAsync(['node', 'hcs25', 'local-node', '--fault', 'sometimes:1']);
    expect(process.exitCode).toBe(2);
    process.exitCode = 0;
  });
});
