import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, publishScoreRecords } from '../../src/actions/index.js';
import { createHcs25Client, type Hcs25Client } from '../../src/client.js';
import { computeScores } from '../../src/consumer/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/consumer/scoring-config.js';
import { journalPath, readJournal } from '../../src/publisher/journal.js';
import { scoreMessageV2Schema } from '../../src/signals/score.js';
import { emulatorConfig, journalWith, readTopic, startHarness, tempDir, type Harness } from '../publisher/helpers.js';
import { HOUR, T0, evalSignal, probe, uaid } from './helpers.js';

const tmp = tempDir();
let h: Harness;
let client: Hcs25Client;

beforeAll(async () => {
  h = await startHarness();
  client = createHcs25Client(emulatorConfig(h, tmp.dir, { stateDir: tmp.dir }));
});
afterAll(async () => {
  await client.close();
  await h.close();
  tmp.cleanup();
});

/** Scores of `n` subjects (a probe and a math eval each). */
function subjects(n: number) {
  const signals = Array.from({ length: n }, (_, i) => [
    probe(uaid(`agent-${i}.example.com`), { seq: 2 * i + 1, at: T0 + i * 1000, reachable: i % 3 !== 0 }),
    evalSignal(uaid(`agent-${i}.example.com`), 'math', i % 2 ? 'correct' : 'wrong', { seq: 2 * i + 2, at: T0 + i * 1000 + 500 }),
  ]).flat();
  return computeScores(signals, DEFAULT_SCORING_CONFIG, { now: new Date(T0 + HOUR) }).subjects;
}

describe('publishScoreRecords (journaled, pipelined, exactly once)', () => {
  it('publishes one v2 score record per subject, in the report order, each journaled with its receipt', async () => {
    const scored = subjects(24);
    const { topicId } = await createTopic(client, {});
    const { published, publication } = await publishScoreRecords(client, { scoreTopic: topicId, subjects: scored });
    expect(published.map((p) => p.subject)).toEqual(scored.map((s) => s.subject));
    expect(new Set(published.map((p) => p.sequenceNumber)).size).toBe(24);
    expect(published.every((p) => p.explained)).toBe(true);

    const onTopic = await readTopic(h.mirror, topicId, 24);
    expect(onTopic).toHaveLength(24);
    const records = onTopic.map((m) => scoreMessageV2Schema.parse(JSON.parse(m.message.toString('utf8'))));
    expect(records.map((r) => r.subject).sort()).toEqual(scored.map((s) => s.subject).sort());

    const { state } = await readJournal(journalPath(tmp.dir, publication));
    expect(state.end?.status).toBe('complete');
    expect([...(state.scores?.values() ?? [])].every((r) => r.receipt && r.txIds.length === 1)).toBe(true);
  });

  it('a publication that lost its receipts (a crash after sending) resumes under the journaled ids: nothing lands twice', async () => {
    const scored = subjects(10);
    const { topicId } = await createTopic(client, {});
    const first = await publishScoreRecords(client, { scoreTopic: topicId, subjects: scored });
    await readTopic(h.mirror, topicId, 10);
    // The process died after every send and before any receipt was journaled.
    const path = journalPath(tmp.dir, first.publication);
    const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l !== '' && !/"t":"(receipt|end)"/.test(l));
    writeFileSync(path, `${lines.join('\n')}\n`);

    const resumed = await publishScoreRecords(client, { scoreTopic: topicId, subjects: [], resume: first.publication });
    expect(resumed.published.map((p) => [p.subject, p.transactionId, p.sequenceNumber])).toEqual(first.published.map((p) => [p.subject, p.transactionId, p.sequenceNumber]));
    expect(await readTopic(h.mirror, topicId, 10)).toHaveLength(10);
    const { state } = await readJournal(path);
    expect(state.end?.status).toBe('complete');
    expect([...state.scores!.values()].every((r) => r.txIds.length === 1)).toBe(true);
  });

  it('refuses to resume a signal run, or a publication to another topic, and sends nothing', async () => {
    const run = await journalWith(tmp.dir, ['k']);
    await run.close();
    await expect(publishScoreRecords(client, { scoreTopic: '0.0.1001', subjects: [], resume: run.runId })).rejects.toThrow(/is a run, not a score publication/);
    const { topicId } = await createTopic(client, {});
    const done = await publishScoreRecords(client, { scoreTopic: topicId, subjects: subjects(1) });
    await expect(publishScoreRecords(client, { scoreTopic: '0.0.1001', subjects: [], resume: done.publication })).rejects.toThrow(/went to .*, not 0\.0\.1001/);
  });

  it('refuses before journaling anything when the forecast exceeds --max-fee-hbar', async () => {
    const poor = createHcs25Client(emulatorConfig(h, tmp.dir, { stateDir: tmp.dir, maxFeeHbar: 0.000001 }));
    try {
      await expect(publishScoreRecords(poor, { scoreTopic: '0.0.1001', subjects: subjects(50) })).rejects.toMatchObject({ code: 'FEE_CAP' });
    } finally {
      await poor.close();
    }
  });
});
