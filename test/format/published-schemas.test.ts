/**
 * What a consumer holding only the ledger can check: every message `hcs25` publishes by default (a run's signals,
 * its reveal, score records) is UTF-8 JSON and validates against the JSON Schema of its op in the definition file the
 * topic's memo points to. Through the built CLI, against the emulator.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/index.js';
import { parseFormatDefinition } from '../../src/format/definition.js';
import { readHcs1File } from '../../src/hedera/hcs1.js';
import { parseSignalTopicMemo } from '../../src/publish/topic.js';
import { readTopic, spawnCli, startHarness, tempDir, type Harness } from '../publish/helpers.js';

let h: Harness;
let fleet: AgentFleet;
const tmp = tempDir();

beforeAll(async () => {
  h = await startHarness();
  fleet = await startAgentFleet({ include: ['perfect', 'verbose', 'wrong', 'garbage', 'mcp-tools'] });
  writeFileSync(join(tmp.dir, 'agents.json'), JSON.stringify(fleet.agents));
});
afterAll(async () => {
  await fleet.stop();
  await h.close();
  tmp.cleanup();
});

const cli = async (args: string[]) => {
  const r = await spawnCli(h, tmp.dir, args).done;
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
};

/** The JSON Schemas of a topic's format, found from its memo alone: memo → HCS-1 file → `schemas[op]`. */
async function schemasOf(topic: string): Promise<Record<string, Record<string, unknown>>> {
  const memo = parseSignalTopicMemo((await h.mirror.getTopic(topic))!.memo);
  expect(memo).toMatchObject({ form: 'hcs25-tool', version: 3, schemaFile: expect.any(String) });
  const file = await readHcs1File(h.mirror, (memo as { schemaFile: string }).schemaFile);
  return parseFormatDefinition(file.bytes, 'the definition file').schemas;
}

/** Each message of `topic` as JSON text, checked against its op's schema; returns the ops seen. */
async function validateTopic(topic: string, count: number): Promise<string[]> {
  const schemas = await schemasOf(topic);
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const ops: string[] = [];
  for (const m of await readTopic(h.mirror, topic, count)) {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(m.message);
    const value = JSON.parse(text) as { fmt?: string; op: string };
    expect(value.fmt).toBe('hcs25-tool/3');
    const schema = schemas[value.op];
    expect(schema, `a schema for op ${value.op}`).toBeDefined();
    const validate = ajv.compile({ ...schema, $id: undefined });
    expect(validate(value), `${text}\n${JSON.stringify(validate.errors)}`).toBe(true);
    ops.push(value.op);
  }
  return ops;
}

describe('messages published by default', () => {
  it('are JSON and validate against the schemas their topic points to: signals, reveal, score records', async () => {
    const topic = (await cli(['topic', 'create'])).trim();
    const scoreTopic = (await cli(['topic', 'create'])).trim();
    const agentsFile = join(tmp.dir, 'agents.json');
    const run = (JSON.parse(await cli(['--json', 'run', '--agents', agentsFile, '--topic', topic])) as { run: string })
      .run;
    await cli(['reveal', '--run', run]);
    await cli(['scores', '--topic', topic, '--publish', '--score-topic', scoreTopic]);

    const signalOps = await validateTopic(topic, 2);
    expect(new Set(signalOps)).toEqual(new Set(['signals', 'reveal']));
    // Two subjects share a readable message: fewer messages than agents.
    expect(signalOps.filter((op) => op === 'signals').length).toBeLessThan(fleet.agents.length);
    const scoreOps = await validateTopic(scoreTopic, 1);
    expect(scoreOps.length).toBeGreaterThan(0);
    for (const op of scoreOps) expect(['score', 'scores']).toContain(op);
  });
});
