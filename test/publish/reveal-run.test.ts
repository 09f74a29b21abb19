import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PrivateKey } from '@hashgraph/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { QUESTION_GENERATOR, scienceBankDigest } from '../../src/evaluate/generator.js';
import { loadScienceBank } from '../../src/evaluate/science.js';
import { emptyRunState, readJournal, type RunConfigSummary, type RunState } from '../../src/publish/journal.js';
import { revealMessageFor, revealRun } from '../../src/publish/reveal-run.js';
import { createHcs25Client } from '../../src/client.js';
import { revealMessageV2Schema } from '../../src/format/schema-v2.js';
import { revealMessageV3Schema } from '../../src/format/schema-v3.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { emulatorConfig, journalWith, startHarness, tempDir } from './helpers.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe('revealRun', () => {
  it('refuses to reveal a run on another network than it ran on, and sends nothing', async () => {
    const journal = await journalWith(tmp.dir, ['k']); // a run on `local`
    journal.append({ t: 'end', status: 'complete' });
    await journal.close();
    const config = loadConfig({
      cwd: tmp.dir,
      // Another network, on addresses where nothing listens: nothing may be sent anyway.
      env: {
        HCS25_NETWORK: 'custom',
        HCS25_NODES: '127.0.0.1:1=0.0.3',
        HCS25_MIRROR_REST_URL: 'http://127.0.0.1:1',
        HCS25_OPERATOR_ID: '0.0.2',
        HCS25_OPERATOR_KEY: PrivateKey.generateED25519().toStringDer(),
        HCS25_STATE_DIR: tmp.dir,
      },
    });
    await expect(revealRun(createHcs25Client(config), { run: journal.runId, force: true })).rejects.toThrow(
      /ran on local, not custom/,
    );
    const { state } = await readJournal(journal.path);
    expect(state.reveals.size).toBe(0);
  });

  it('reveals from the state its publisher left, without reading the journal again, and journals the reveal', async () => {
    const h = await startHarness();
    const client = createHcs25Client(emulatorConfig(h, tmp.dir, { stateDir: tmp.dir }));
    try {
      const { topicId } = await createSignalTopic(h.client);
      const journal = await journalWith(tmp.dir, [], topicId);
      await journal.close();
      // The file has no end record, so a reveal that reads it refuses; the state in memory says the run is complete,
      // as publishSignals leaves it, so a reveal given that state has not read the file.
      await expect(revealRun(client, { run: journal.runId })).rejects.toThrow(
        /has not finished publishing \(no end record\)/,
      );
      const { state } = await readJournal(journal.path, { keep: 'pending' });
      state.end = { t: 'end', at: new Date().toISOString(), status: 'complete' };
      const revealed = await revealRun(client, { run: journal.runId, state });
      expect(revealed).toMatchObject({ topic: topicId, already: false });
      expect(revealed.seq).toBeGreaterThan(0);
      // Journaled through the reopened file: a later reveal finds it and sends nothing.
      expect((await readJournal(journal.path)).state.reveals.get(topicId)?.receipt?.seq).toBe(revealed.seq);
      expect(await revealRun(client, { run: journal.runId })).toMatchObject({ seq: revealed.seq, already: true });
    } finally {
      await client.close();
      await h.close();
    }
  });
});

describe('revealMessageFor (reveal v2)', () => {
  const start = (config: Partial<RunConfigSummary>): RunState =>
    emptyRunState({
      t: 'start',
      v: 1,
      at: '2026-11-21T10:00:00.000Z',
      run: '01JDX3V9W5Q8K6T2N4M7P1R0ZA',
      seed: 'a1b2c3d4e5f60718',
      runKey: Buffer.alloc(32, 7).toString('base64url'),
      topic: '0.0.1001',
      config: {
        network: 'local',
        evals: ['availability', 'math', 'science'],
        concurrency: 1,
        budgetMs: 1000,
        maxFeeHbar: 5,
        keepResponses: false,
        ...config,
      },
      agents: [],
    });

  it('publishes key, seed, generator, grader and the bundled bank digest, and parses back', () => {
    const built = revealMessageFor(start({}));
    const parsed = revealMessageV2Schema.parse(JSON.parse(built.json));
    expect(parsed).toEqual({
      p: 'hcs-25',
      op: 'reveal',
      v: 2,
      run: '01JDX3V9W5Q8K6T2N4M7P1R0ZA',
      key: Buffer.alloc(32, 7).toString('base64url'),
      seed: 'a1b2c3d4e5f60718',
      generator: QUESTION_GENERATOR,
      grader: 'first-token@1',
      bank: { id: 'builtin', digest: scienceBankDigest(loadScienceBank()) },
    });
    expect(built.bytes).toBeLessThanOrEqual(1024);
  });

  it('reveals a format-3 run in format 3, and a run begun in v2 in v2', () => {
    const v3 = revealMessageFor(start({ pack: 'json', format: 3 }));
    const { p: _p, op: _op, v: _v, ...fields } = revealMessageFor(start({})).message as Record<string, unknown>;
    expect(revealMessageV3Schema.parse(JSON.parse(v3.json))).toEqual({
      fmt: 'hcs25-tool/3',
      op: 'reveal',
      ...fields,
    });
    expect(JSON.parse(revealMessageFor(start({ pack: 'dense' })).json)).toMatchObject({ p: 'hcs-25', v: 2 });
  });

  it('a run without science names no bank; the journaled grader is used', () => {
    const parsed = revealMessageFor(start({ evals: ['math'], extra: { grader: 'last-answer@1' } })).message;
    expect(parsed.bank).toBeUndefined();
    expect(parsed.grader).toBe('last-answer@1');
  });

  it('a private bank is named by digest only, and refused if the file changed since the run', () => {
    const file = join(tmp.dir, 'bank.json');
    const questions = loadScienceBank().slice(0, 3);
    writeFileSync(file, JSON.stringify({ version: 1, questions }, null, 2));
    const sha = createHash('sha256').update(readFileSync(file)).digest('hex');
    const state = start({ extra: { scienceBank: file, scienceBankSha256: sha } });
    const built = revealMessageFor(state);
    expect(built.message.bank).toEqual({ id: 'private', digest: scienceBankDigest(questions) });
    expect(built.json).not.toContain('bank.json');
    writeFileSync(file, JSON.stringify({ version: 1, questions: questions.slice(1) }));
    expect(() => revealMessageFor(state)).toThrow(/changed since the run began/);
  });
});
