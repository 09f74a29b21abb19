/**
 * `hcs25 run` refuses to publish where it makes no sense, before evaluating anyone: a registry topic (signals there
 * would be skipped by every later discover), a topic that does not exist, a topic whose submit key is someone else's.
 * `--force` publishes to a topic with another memo on purpose. `hcs25 scores` refuses to read a topic that holds no
 * hcs25 message at all, instead of printing an empty table.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PrivateKey, TopicCreateTransaction } from '@hashgraph/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register as registerRegistry } from '../../src/cli/registry.js';
import { register as registerRun } from '../../src/cli/run.js';
import { register as registerScores } from '../../src/cli/scores.js';
import { register as registerTopic } from '../../src/cli/topic.js';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/index.js';
import { startLocalNode, type LocalNode } from '../../src/localnode/index.js';
import { runCli, useEmulatorEnv } from '../support/cli.js';

let node: LocalNode;
let fleet: AgentFleet;
let dir: string;
let agents: string;
let restoreEnv: () => void = () => undefined;

beforeAll(async () => {
  node = await startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, quiet: true });
  fleet = await startAgentFleet({ include: ['perfect'] });
  dir = mkdtempSync(join(tmpdir(), 'hcs25-run-topic-'));
  agents = join(dir, 'agents.json');
  writeFileSync(agents, JSON.stringify(fleet.agents));
  restoreEnv = useEmulatorEnv(node, dir);
});

afterAll(async () => {
  restoreEnv();
  await fleet?.stop();
  await node?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const hcs25 = (args: string[]) => runCli([registerRun, registerRegistry, registerTopic, registerScores], args);
const run = (topic: string, ...extra: string[]) =>
  hcs25(['run', '--agents', agents, '--topic', topic, '--evals', 'availability', ...extra]);

describe('hcs25 run checks its topic first', () => {
  it('refuses a registry topic (exit 2) and evaluates no one; --force publishes there on purpose', async () => {
    const registry = JSON.parse((await hcs25(['--json', 'registry', 'create', '--kind', 'hcs-2'])).stdout) as {
      topicId: string;
    };
    const refused = await run(registry.topicId);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/memo "hcs-2:0:86400": a registry topic/);
    expect(refused.stderr).toMatch(/--force/);
    expect(refused.stderr).not.toMatch(/agents ×/);
    const forced = await run(registry.topicId, '--force');
    expect(forced.code, forced.stderr).toBe(0);
  });

  it('refuses a topic that does not exist', async () => {
    const r = await run('0.0.999999');
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/topic 0\.0\.999999 does not exist on this network/);
  });

  it("refuses a topic whose submit key is someone else's (exit 2)", async () => {
    const client = node.client();
    const other = PrivateKey.generateED25519();
    const receipt = await (
      await new TopicCreateTransaction().setTopicMemo('hcs-25:0:86400').setSubmitKey(other.publicKey).execute(client)
    ).getReceipt(client);
    client.close();
    const r = await run(receipt.topicId!.toString());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/submit key that is not the operator's/);
  });

  it("publishes to the operator's own signal topic", async () => {
    const topic = (await hcs25(['topic', 'create', '--submit-key-operator'])).stdout.trim();
    const r = await run(topic);
    expect(r.code, r.stderr).toBe(0);
  });

  it('publishes to a format-3 topic (memo hcs25-tool/3 hcs://1/…), and --pack takes json, subject, none or dense', async () => {
    const client = node.client();
    const receipt = await (
      await new TopicCreateTransaction().setTopicMemo('hcs25-tool/3 hcs://1/0.0.5').execute(client)
    ).getReceipt(client);
    client.close();
    const r = await run(receipt.topicId!.toString(), '--pack', 'dense');
    expect(r.code, r.stderr).toBe(0);
    const bad = await run(receipt.topicId!.toString(), '--pack', 'zip');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--pack must be json, subject, none or dense/);
  });

  it('scores: a topic with no hcs25 message (a registry) is a usage error (exit 2), not an empty table', async () => {
    const registry = JSON.parse((await hcs25(['--json', 'registry', 'create', '--kind', 'hcs-2'])).stdout) as {
      topicId: string;
    };
    const record = join(dir, 'record.json');
    writeFileSync(record, JSON.stringify(fleet.agents[0]));
    const listed = await hcs25(['registry', 'register', '-r', registry.topicId, '--record', record]);
    expect(listed.code, listed.stderr).toBe(0);
    const r = await hcs25(['scores', '--topic', registry.topicId, '--no-names']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/holds no hcs25 messages \(1 of another kind\)/);
    expect(r.stderr).toMatch(/hint: pass the signal topic/);
    // A signal topic that is merely empty still scores: nothing to show is not an error.
    const empty = (await hcs25(['topic', 'create', '--no-schemas'])).stdout.trim();
    expect((await hcs25(['scores', '--topic', empty, '--no-names'])).code).toBe(0);
  });
});
