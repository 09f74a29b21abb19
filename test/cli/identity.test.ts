/** `hcs25 identity create|show` against the emulator, in-process, configured through the environment like a user would. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register } from '../../src/cli/identity.js';
import { startLocalNode, type LocalNode } from '../../src/localnode/index.js';
import { runCli, useEmulatorEnv } from '../support/cli.js';

let node: LocalNode;
let stateDir: string;
let restoreEnv: (() => void) | undefined;

beforeAll(async () => {
  node = await startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, mirrorLagMs: 300, quiet: true });
  stateDir = mkdtempSync(join(tmpdir(), 'hcs25-identity-cli-'));
  restoreEnv = useEmulatorEnv(node, stateDir);
});

afterAll(async () => {
  restoreEnv?.();
  await node?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const hcs25 = (args: string[]) => runCli([register], args);

describe('hcs25 identity', () => {
  it('show before create says what to do', async () => {
    const r = await hcs25(['identity', 'show']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no HCS-10 identity is stored for 0\.0\.2 on custom[\s\S]*hcs25 identity create/);
  });

  it('create makes one, a second create reuses it, show checks it on the ledger', async () => {
    const first = await hcs25(['--json', 'identity', 'create', '--name', 'test runner']);
    expect(first.code, first.stderr).toBe(0);
    const made = JSON.parse(first.stdout) as { created: boolean; identity: Record<string, string> };
    expect(made.created).toBe(true);
    expect(made.identity).toMatchObject({ network: 'custom', accountId: '0.0.2', displayName: 'test runner' });

    const again = await hcs25(['--json', 'identity', 'create']);
    expect(JSON.parse(again.stdout)).toMatchObject({ created: false, identity: made.identity });

    const shown = await hcs25(['identity', 'show']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`operator_id      ${made.identity.inboundTopicId}@0.0.2`);
    expect(shown.stdout).toContain('holds on the ledger: yes');
    expect(shown.stdout + shown.stderr).not.toContain(node.operator.privateKey.slice(-20));

    const forced = await hcs25(['--json', 'identity', 'create', '--force']);
    const replaced = JSON.parse(forced.stdout) as { created: boolean; identity: Record<string, string> };
    expect(replaced.created).toBe(true);
    expect(replaced.identity.inboundTopicId).not.toBe(made.identity.inboundTopicId);
    // The account memo now points at the new profile, so the old identity no longer holds.
    const show = await hcs25(['--json', 'identity', 'show']);
    expect(JSON.parse(show.stdout)).toMatchObject({ identity: replaced.identity, check: { ok: true } });
  });

  it('does not overwrite an account memo it did not write, unless told to', async () => {
    const { AccountUpdateTransaction } = await import('@hashgraph/sdk');
    const client = node.client();
    try {
      await (
        await new AccountUpdateTransaction()
          .setAccountId('0.0.2')
          .setAccountMemo('hcs-11:ipfs://somebody-else')
          .execute(client)
      ).getReceipt(client);
    } finally {
      client.close();
    }
    // The stored identity no longer holds (its memo is gone), so create would make a new one, over a memo it did not write.
    const refused = await hcs25(['identity', 'create']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/memo of 0\.0\.2 is "hcs-11:ipfs:\/\/somebody-else"[\s\S]*--replace-memo/);
    const replaced = await hcs25(['--json', 'identity', 'create', '--replace-memo']);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(JSON.parse(replaced.stdout)).toMatchObject({ created: true });
  });
});
