/**
 * `hcs25 topic create` makes a self-describing topic (the format-3 definition inscribed as an HCS-1 file, named in
 * the memo), and `hcs25 topic describe` reads any topic back from the ledger alone. Against the emulator.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@hashgraph/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register as registerRegistry } from '../../src/cli/registry.js';
import { register as registerTopic } from '../../src/cli/topic.js';
import { buildRevealMessageV2 } from '../../src/format/write.js';
import { readHcs1File } from '../../src/hedera/hcs1.js';
import { inscribeHcs1 } from '../../src/hedera/hcs1-write.js';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { submitMessage } from '../../src/hedera/tx.js';
import { renderJsonSchemas } from '../../src/json-schemas.js';
import { startLocalNode, type LocalNode } from '../../src/localnode/index.js';
import { FORMAT_DOCS_URL, parseFormatDefinition } from '../../src/format/definition.js';
import type { DescribeTopicReturnType } from '../../src/read/describe-topic.js';
import { runCli, useEmulatorEnv } from '../support/cli.js';

let node: LocalNode;
let sdk: Client;
let mirror: MirrorRestClient;
let dir: string;
let restoreEnv: () => void = () => undefined;

beforeAll(async () => {
  node = await startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, quiet: true });
  sdk = node.client();
  mirror = new MirrorRestClient({ baseUrl: node.mirrorRestUrl, retries: 1, minBackoffMs: 20 });
  dir = mkdtempSync(join(tmpdir(), 'hcs25-topic-'));
  restoreEnv = useEmulatorEnv(node, dir);
});

afterAll(async () => {
  restoreEnv();
  sdk?.close();
  await mirror?.close();
  await node?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const hcs25 = (args: string[]) => runCli([registerTopic, registerRegistry], args);

interface Created {
  topicId: string;
  memo: string;
  costTinybar?: string;
  schemaFile?: {
    topicId: string;
    hrl: string;
    inscribed: boolean;
    chunks?: number;
    schemas: string[];
    costTinybar?: string;
  };
}

async function create(...args: string[]): Promise<Created> {
  const r = await hcs25(['--json', 'topic', 'create', ...args]);
  expect(r.code, r.stderr + r.stdout).toBe(0);
  return JSON.parse(r.stdout) as Created;
}

async function describeJson(topic: string): Promise<DescribeTopicReturnType> {
  const r = await hcs25(['--json', 'topic', 'describe', topic]);
  expect(r.code, r.stderr + r.stdout).toBe(0);
  return JSON.parse(r.stdout) as DescribeTopicReturnType;
}

/** The format-3 schemas json-schemas.ts renders, keyed by op (`signals-3.schema.json` → `signals`). */
function renderedThree(): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [file, text] of Object.entries(renderJsonSchemas())) {
    if (file.endsWith('-3.schema.json')) out[file.slice(0, -'-3.schema.json'.length)] = JSON.parse(text);
  }
  return out;
}

describe('hcs25 topic create', () => {
  let first: Created;

  it('inscribes the format definition as an HCS-1 file and names it in the memo; every schema is the rendered one', async () => {
    first = await create();
    const file = first.schemaFile!;
    expect(file.inscribed).toBe(true);
    expect(file.hrl).toBe(`hcs://1/${file.topicId}`);
    expect(first.memo).toBe(`hcs25-tool/3 hcs://1/${file.topicId}`);
    expect((await mirror.getTopic(first.topicId))?.memo).toBe(first.memo);
    // Paid for: the inscription is part of the total.
    expect(BigInt(file.costTinybar!)).toBeGreaterThan(0n);
    expect(BigInt(first.costTinybar!)).toBeGreaterThan(BigInt(file.costTinybar!));

    const inscribed = await readHcs1File(mirror, file.topicId);
    expect(inscribed.mimeType).toBe('application/json');
    const definition = parseFormatDefinition(inscribed.bytes, 'file');
    expect(definition).toMatchObject({
      format: 'hcs25-tool/3',
      title: 'hcs25 trust-signal messages, format 3',
      docs: FORMAT_DOCS_URL,
    });
    const rendered = renderedThree();
    expect(Object.keys(definition.schemas).sort()).toEqual(Object.keys(rendered).sort());
    for (const [name, schema] of Object.entries(definition.schemas)) expect(schema, name).toEqual(rendered[name]);
    expect(file.schemas).toEqual(Object.keys(rendered).sort());
  });

  it('prints the topic id alone on stdout, the schema file and its cost on stderr', async () => {
    const r = await hcs25(['topic', 'create', '--submit-key-operator']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^0\.0\.\d+$/);
    expect(r.stderr).toMatch(/schema file hcs:\/\/1\/0\.0\.\d+: inscribed in \d+ messages? for [\d.]+ ℏ/);
    expect(r.stderr).toMatch(/memo hcs25-tool\/3 hcs:\/\/1\/0\.0\.\d+, submit key set\); paid [\d.]+ ℏ in all/);
  });

  it('--schemas hcs://1/… reuses an existing definition file instead of inscribing one', async () => {
    const hrl = first.schemaFile!.hrl;
    const second = await create('--schemas', hrl);
    expect(second.memo).toBe(`hcs25-tool/3 ${hrl}`);
    expect(second.schemaFile).toMatchObject({ topicId: first.schemaFile!.topicId, inscribed: false });
    expect(second.schemaFile!.schemas).toEqual(first.schemaFile!.schemas);
    expect(second.schemaFile!.chunks).toBeUndefined();
    // Only the topic was paid for: less than the first, which inscribed the file too.
    expect(BigInt(second.costTinybar!)).toBeLessThan(BigInt(first.costTinybar!));
    expect((await describeJson(second.topicId)).schemaFile?.topicId).toBe(first.schemaFile!.topicId);
  });

  it('--schemas refuses what is not an HCS-1 reference (exit 2) or not a format definition (exit 1)', async () => {
    const bad = await hcs25(['topic', 'create', '--schemas', 'hcs://2/0.0.5']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--schemas must be an HCS-1 file reference like hcs:\/\/1\/0\.0\.1234/);
    const text = await inscribeHcs1(sdk, Buffer.from('{"hello":"world"}'), { mimeType: 'application/json' });
    const other = await hcs25(['topic', 'create', '--schemas', text.hrl]);
    expect(other.code).toBe(1);
    expect(other.stderr).toMatch(new RegExp(`HCS-1 file ${text.hrl} is not a format definition`));
    expect(other.stderr).toMatch(/hint: /);
    const both = await hcs25(['topic', 'create', '--schemas', first.schemaFile!.hrl, '--memo', 'hcs25-tool/3']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--memo or --schemas, not both/);
  });

  it('--no-schemas inscribes nothing (memo hcs25-tool/3)', async () => {
    const created = await create('--no-schemas');
    expect(created.memo).toBe('hcs25-tool/3');
    expect(created.schemaFile).toBeUndefined();
    const d = await describeJson(created.topicId);
    expect(d.kind).toBe('format-3');
    expect(d.what).toMatch(/names no schema file/);
    expect(d.schemaFile).toBeUndefined();
  });

  it('--memo is taken as is, with a warning when it is no signal-topic memo', async () => {
    const old = await hcs25(['topic', 'create', '--memo', 'hcs-25:0:3600']);
    expect(old.code, old.stderr).toBe(0);
    expect(old.stderr).not.toMatch(/warning/);
    expect(old.stderr).not.toMatch(/schema file/);
    const odd = await hcs25(['topic', 'create', '--memo', 'my topic']);
    expect(odd.code, odd.stderr).toBe(0);
    expect(odd.stderr).toMatch(/warning: "my topic" is not a signal topic memo/);
    expect((await mirror.getTopic(odd.stdout.trim()))?.memo).toBe('my topic');
  });

  it('refuses a memo over 100 bytes before paying for anything (exit 2)', async () => {
    const memo = `hcs25-tool/3 ${'x'.repeat(90)}`;
    const r = await hcs25(['topic', 'create', '--memo', memo]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the topic memo is 103 bytes; Hedera allows 100/);
    expect(r.stderr).toMatch(/hint: shorten --memo/);
    expect(r.stderr.trim().split('\n')).toHaveLength(2);
  });
});

describe('hcs25 topic describe', () => {
  it('shows a format-3 topic: its schema file, schemas, docs, who can publish', async () => {
    const created = await create('--submit-key-operator');
    const d = await describeJson(created.topicId);
    expect(d).toMatchObject({
      topicId: created.topicId,
      kind: 'format-3',
      format: 'hcs25-tool/3',
      memo: created.memo,
      deleted: false,
      adminKey: null,
      messages: { count: 0 },
      sample: { messages: 0, formats: {} },
      schemaFile: {
        topicId: created.schemaFile!.topicId,
        format: 'hcs25-tool/3',
        docs: FORMAT_DOCS_URL,
        schemas: Object.keys(renderedThree()).sort(),
      },
    });
    expect(d.submitKey).toMatch(/^ED25519:[0-9a-f]{64}$/);
    expect(d.schemaFile?.problem).toBeUndefined();

    const text = await hcs25(['topic', 'describe', created.topicId]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`topic ${created.topicId}: hcs25 signal topic, format hcs25-tool/3`);
    expect(text.stdout).toContain(`schema file  ${created.schemaFile!.hrl}: hcs25 trust-signal messages, format 3`);
    expect(text.stdout).toContain(`docs         ${FORMAT_DOCS_URL}`);
    expect(text.stdout).toMatch(/submit key {3}ED25519:[0-9a-f]{64} \(only its holder can publish\)/);
  });

  it('shows an old hcs-25 topic, its message count, times and the formats of its first page', async () => {
    const topic = (await create('--memo', 'hcs-25:0:3600')).topicId;
    const reveal = buildRevealMessageV2({
      run: '01JDX3V9W5Q8K6T2N4M7P1R0ZA',
      key: Buffer.alloc(32, 7).toString('base64url'),
      seed: 's',
      generator: 'simple@1',
      grader: 'first-token@1',
    }).json;
    for (const body of [reveal, reveal, '{"p":"hcs-25","op":"signal"', '{"p":"hcs-2","op":"register"}'])
      await submitMessage(sdk, topic, body, undefined);
    const d = await describeJson(topic);
    expect(d).toMatchObject({ kind: 'old-format', format: 'hcs-25 v1/v2', ttl: 3600, submitKey: null });
    expect(d.what).toMatch(/old form/);
    expect(d.messages.count).toBe(4);
    expect(Date.parse(d.messages.first!)).toBeLessThanOrEqual(Date.parse(d.messages.last!));
    expect(d.sample).toEqual({
      messages: 4,
      formats: { 'hcs-25 v2': 2, 'malformed (bad-json)': 1, 'not hcs-25': 1 },
    });
    const text = await hcs25(['topic', 'describe', topic]);
    expect(text.stdout).toMatch(/submit key {3}none \(anyone may publish\)/);
    expect(text.stdout).toMatch(/messages {5}4 \(first \S+, last \S+\)/);
    expect(text.stdout).toMatch(/first 4 {6}hcs-25 v2: 2, /);
  });

  it('shows an HCS-2 registry for what it is', async () => {
    const registry = (await hcs25(['registry', 'create', '--kind', 'hcs-2'])).stdout.trim();
    const d = await describeJson(registry);
    expect(d.kind).toBe('hcs-2');
    expect(d.what).toMatch(/^HCS-2 registry/);
    expect(d.format).toBeUndefined();
  });

  it('says when the schema file a memo names is unusable, and still describes the topic', async () => {
    const notFile = (await create('--no-schemas')).topicId;
    const topic = (await create('--memo', `hcs25-tool/3 hcs://1/${notFile}`)).topicId;
    const d = await describeJson(topic);
    expect(d.kind).toBe('format-3');
    expect(d.schemaFile).toMatchObject({ topicId: notFile });
    expect(d.schemaFile?.problem).toMatch(/is not an HCS-1 file/);
  });

  it('refuses a bad id (exit 2) and an unknown topic (exit 1), one line and a hint', async () => {
    const bad = await hcs25(['topic', 'describe', '0.0.x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/<topic-id> must be an id like 0\.0\.1234/);
    const missing = await hcs25(['topic', 'describe', '0.0.999999']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/does not know topic 0\.0\.999999\n {2}hint: check the id and --network/);
  });
});
