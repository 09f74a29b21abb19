import { readFileSync, writeFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTopic, publishScoreRecords } from '../../src/actions.js';
import { createHcs25Client, type Hcs25Client } from '../../src/client.js';
import { packScoresV3 } from '../../src/score/publish-scores.js';
import type { ScoreEvidenceSource } from '../../src/score/record-v3.js';
import { computeScores } from '../../src/score/scores.js';
import { DEFAULT_SCORING_CONFIG } from '../../src/score/scoring-config.js';
import { estimateSubmitFee } from '../../src/publish/fees.js';
import { journalPath, readJournal } from '../../src/publish/journal.js';
import { readScoreOpsV3 } from '../../src/format/read-score-v3.js';
import { scoreMessageV3Schema } from '../../src/format/score-v3.js';
import { emulatorConfig, journalWith, readTopic, startHarness, tempDir, type Harness } from '../publish/helpers.js';
import { HOUR, T0, evalSignal, probe, uaid } from '../support/signals.js';

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

/** What the records cite (these tests publish; test/verify recomputes from real evidence). */
const EVIDENCE: ScoreEvidenceSource = { topic: '0.0.1234', seq: [1, 1000], publishers: ['0.0.2'] };

/** The op "score" records of a format-3 message, as the reader yields them. */
function recordsOf(bytes: Buffer) {
  let value = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
  if (value.op === 'zlib') value = JSON.parse(inflateSync(Buffer.from(String(value.zlib), 'base64')).toString('utf8'));
  return readScoreOpsV3(value);
}

/** Scores of `n` subjects (a probe and a math eval each). */
function subjects(n: number) {
  const signals = Array.from({ length: n }, (_, i) => [
    probe(uaid(`agent-${i}.example.com`), { seq: 2 * i + 1, at: T0 + i * 1000, reachable: i % 3 !== 0 }),
    evalSignal(uaid(`agent-${i}.example.com`), 'math', i % 2 ? 'correct' : 'wrong', {
      seq: 2 * i + 2,
      at: T0 + i * 1000 + 500,
    }),
  ]).flat();
  return computeScores(signals, DEFAULT_SCORING_CONFIG, { now: new Date(T0 + HOUR) }).subjects;
}

describe('publishScoreRecords (packed, journaled, pipelined, exactly once)', () => {
  it('--pack none publishes one format-3 score record per subject, in the report order, each journaled with its receipt', async () => {
    const scored = subjects(24);
    const { topicId } = await createTopic(client, {});
    const { published, publication, messages } = await publishScoreRecords(client, {
      scoreTopic: topicId,
      subjects: scored,
      evidence: EVIDENCE,
      pack: 'none',
    });
    expect(messages).toBe(24);
    expect(published.every((p) => p.index === 0)).toBe(true);
    expect(published.map((p) => p.subject)).toEqual(scored.map((s) => s.subject));
    expect(new Set(published.map((p) => p.sequenceNumber)).size).toBe(24);
    expect(published.every((p) => p.explained)).toBe(true);

    const onTopic = await readTopic(h.mirror, topicId, 24);
    expect(onTopic).toHaveLength(24);
    const records = onTopic.map((m) => scoreMessageV3Schema.parse(JSON.parse(m.message.toString('utf8'))));
    expect(records.every((r) => r.evidence.topic === EVIDENCE.topic && r.evidence.runs!.length === 2)).toBe(true);
    expect(records.map((r) => r.subject).sort()).toEqual(scored.map((s) => s.subject).sort());

    const { state } = await readJournal(journalPath(tmp.dir, publication));
    expect(state.end?.status).toBe('complete');
    expect([...(state.scores?.values() ?? [])].every((r) => r.receipt && r.txIds.length === 1)).toBe(true);
  });

  it('writes readable JSON by default (json): every message a format-3 op "score"/"scores" message', async () => {
    const scored = subjects(5);
    const { topicId } = await createTopic(client, {});
    const { messages } = await publishScoreRecords(client, {
      scoreTopic: topicId,
      subjects: scored,
      evidence: EVIDENCE,
    });
    const onTopic = await readTopic(h.mirror, topicId, messages);
    const values = onTopic.map((m) => JSON.parse(m.message.toString('utf8')) as { fmt: string; op: string });
    expect(values.every((v) => v.fmt === 'hcs25-tool/3' && ['score', 'scores'].includes(v.op))).toBe(true);
    expect(
      onTopic.flatMap((m) => recordsOf(m.message)).map((i) => (i as { message: { subject: string } }).message.subject),
    ).toEqual(scored.map((s) => s.subject));
  });

  it('refuses to publish records without their evidence', async () => {
    await expect(publishScoreRecords(client, { scoreTopic: '0.0.1001', subjects: subjects(1) })).rejects.toThrow(
      /need their evidence/,
    );
  });

  it('--pack dense: several records per op "zlib" message, each read back as its op "score" record', async () => {
    const scored = subjects(40);
    const { topicId } = await createTopic(client, {});
    const { published, messages } = await publishScoreRecords(client, {
      scoreTopic: topicId,
      subjects: scored,
      evidence: EVIDENCE,
      pack: 'dense',
    });
    expect(messages).toBeLessThan(40 / 3);
    expect(published.map((p) => p.subject)).toEqual(scored.map((s) => s.subject));
    expect(new Set(published.map((p) => `${p.sequenceNumber}.${p.index}`)).size).toBe(40);
    expect(published.every((p) => p.explained && p.bytes <= 1024)).toBe(true);

    const onTopic = await readTopic(h.mirror, topicId, messages);
    expect(onTopic).toHaveLength(messages);
    expect(onTopic.every((m) => JSON.parse(m.message.toString('utf8')).op === 'zlib')).toBe(true);
    const records = onTopic.flatMap((m) => {
      return recordsOf(m.message).map((item) => {
        if (item.kind !== 'score') throw new Error(`unexpected ${item.kind}`);
        return {
          sequenceNumber: m.sequenceNumber,
          consensusTimestamp: '1.0',
          consensusAt: '',
          payerAccountId: '0.0.2',
          ...item,
        };
      });
    });
    expect(records.map((r) => [r.sequenceNumber, r.index, r.message.subject])).toEqual(
      published.map((p) => [p.sequenceNumber, p.index, p.subject]),
    );
  });

  it.each(['dense', 'none'] as const)(
    '%s: a publication that lost its receipts (a crash after sending) resumes under the journaled ids: nothing lands twice',
    async (pack) => {
      const scored = subjects(30);
      const { topicId } = await createTopic(client, {});
      const first = await publishScoreRecords(client, {
        scoreTopic: topicId,
        subjects: scored,
        evidence: EVIDENCE,
        pack,
      });
      const n = first.messages;
      await readTopic(h.mirror, topicId, n);
      // The process died after every send and before any receipt was journaled.
      const path = journalPath(tmp.dir, first.publication);
      const lines = readFileSync(path, 'utf8')
        .split('\n')
        .filter((l) => l !== '' && !/"t":"(receipt|end)"/.test(l));
      writeFileSync(path, `${lines.join('\n')}\n`);

      const resumed = await publishScoreRecords(client, {
        scoreTopic: topicId,
        subjects: [],
        resume: first.publication,
      });
      expect(resumed.published.map((p) => [p.subject, p.transactionId, p.sequenceNumber, p.index])).toEqual(
        first.published.map((p) => [p.subject, p.transactionId, p.sequenceNumber, p.index]),
      );
      expect(resumed.published).toHaveLength(30);
      expect(await readTopic(h.mirror, topicId, n)).toHaveLength(n);
      const { state } = await readJournal(path);
      expect(state.end?.status).toBe('complete');
      expect([...state.scores!.values()].every((r) => r.txIds.length === 1)).toBe(true);
    },
  );

  it('a journal from before packing (one `score` record per message) resumes as it began', async () => {
    const scored = subjects(6);
    const { topicId } = await createTopic(client, {});
    const first = await publishScoreRecords(client, {
      scoreTopic: topicId,
      subjects: scored,
      evidence: EVIDENCE,
      pack: 'none',
    });
    await readTopic(h.mirror, topicId, 6);
    const path = journalPath(tmp.dir, first.publication);
    const old = readFileSync(path, 'utf8')
      .split('\n')
      .filter((l) => l !== '' && !/"t":"(receipt|end)"/.test(l))
      .map((l) => {
        const r = JSON.parse(l) as Record<string, unknown>;
        if (r.t !== 'scores') return l;
        return JSON.stringify({
          t: 'score',
          at: r.at,
          key: r.key,
          json: r.data,
          bytes: r.bytes,
          subject: (r.subjects as string[])[0],
        });
      });
    writeFileSync(path, `${old.join('\n')}\n`);
    const resumed = await publishScoreRecords(client, { scoreTopic: topicId, subjects: [], resume: first.publication });
    expect(resumed.published.map((p) => [p.subject, p.transactionId, p.sequenceNumber])).toEqual(
      first.published.map((p) => [p.subject, p.transactionId, p.sequenceNumber]),
    );
    expect(await readTopic(h.mirror, topicId, 6)).toHaveLength(6);
  });

  it('a publication stopped while its messages were being journaled sent nothing, and a resume says so', async () => {
    const { topicId } = await createTopic(client, {});
    const first = await publishScoreRecords(client, {
      scoreTopic: topicId,
      subjects: subjects(3),
      evidence: EVIDENCE,
      pack: 'none',
    });
    // What a crash before the journal's sync can leave: the start record (3 messages planned) and one of them.
    const lines = readFileSync(journalPath(tmp.dir, first.publication), 'utf8').split('\n');
    const cut = '01JZZZZZZZZZZZZZZZZZZZZZZX';
    const partial = [lines[0]!, lines.find((l) => l.includes('"t":"scores"'))!].map((l) =>
      l.replaceAll(first.publication, cut),
    );
    expect(JSON.parse(partial[0]!).config.extra.messages).toBe(3);
    writeFileSync(journalPath(tmp.dir, cut), `${partial.join('\n')}\n`);
    await expect(publishScoreRecords(client, { scoreTopic: topicId, subjects: [], resume: cut })).rejects.toThrow(
      /stopped while its messages were being journaled \(1 of 3\): none of them was sent/,
    );
  });

  it('refuses to resume a signal run, or a publication to another topic, and sends nothing', async () => {
    const run = await journalWith(tmp.dir, ['k']);
    await run.close();
    await expect(
      publishScoreRecords(client, { scoreTopic: '0.0.1001', subjects: [], resume: run.runId }),
    ).rejects.toThrow(/is a run, not a score publication/);
    const { topicId } = await createTopic(client, {});
    const done = await publishScoreRecords(client, { scoreTopic: topicId, subjects: subjects(1), evidence: EVIDENCE });
    await expect(
      publishScoreRecords(client, { scoreTopic: '0.0.1001', subjects: [], resume: done.publication }),
    ).rejects.toThrow(/went to .*, not 0\.0\.1001/);
  });

  it('refuses before journaling anything when the forecast (messages × fee) exceeds --max-fee-hbar', async () => {
    const poor = createHcs25Client(emulatorConfig(h, tmp.dir, { stateDir: tmp.dir, maxFeeHbar: 0.000001 }));
    try {
      await expect(
        publishScoreRecords(poor, { scoreTopic: '0.0.1001', subjects: subjects(50), evidence: EVIDENCE }),
      ).rejects.toMatchObject({ code: 'FEE_CAP' });
    } finally {
      await poor.close();
    }
    // The forecast counts messages, not records: a cap that fits the dense messages of 50 records refuses them one per message.
    const scored = subjects(50);
    const dense = packScoresV3(scored, EVIDENCE, 'dense').length;
    const { tinybar } = await estimateSubmitFee(client.network.ledger, client.mirror);
    const capped = createHcs25Client(
      emulatorConfig(h, tmp.dir, { stateDir: tmp.dir, maxFeeHbar: Number(BigInt(dense) * tinybar) / 1e8 }),
    );
    try {
      const { topicId } = await createTopic(client, {});
      await expect(
        publishScoreRecords(capped, { scoreTopic: topicId, subjects: scored, evidence: EVIDENCE, pack: 'none' }),
      ).rejects.toThrow(/^50 score messages at an estimated/);
      const packed = await publishScoreRecords(capped, {
        scoreTopic: topicId,
        subjects: scored,
        evidence: EVIDENCE,
        pack: 'dense',
      });
      expect(packed.messages).toBe(dense);
    } finally {
      await capped.close();
    }
  });
});
