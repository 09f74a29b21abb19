import { PrivateKey, TopicMessageSubmitTransaction, TransactionId, Timestamp } from '@hashgraph/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRANSACTION_MEMOS } from '../../src/format/protocol.js';
import { FeeMeter } from '../../src/publish/fees.js';
import { readJournal } from '../../src/publish/journal.js';
import { Submitter, type SubmitOutcome, type SubmitterOptions } from '../../src/publish/submitter.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import {
  countBy,
  journalWith,
  messageFor,
  readTopic,
  startHarness,
  submitterSetup,
  tempDir,
  type Harness,
} from './helpers.js';

let h: Harness;
const tmp = tempDir();

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
  tmp.cleanup();
});

function setup(n: number, prefix: string, extra: Partial<SubmitterOptions> = {}) {
  return submitterSetup(h, tmp.dir, n, prefix, extra);
}

function expectExactlyOnce(messages: { message: Buffer }[], keys: string[]): void {
  const counts = countBy(messages, (m) => m.message.toString('utf8'));
  for (const key of keys) expect(counts.get(messageFor(key)), key).toBe(1);
  expect(messages).toHaveLength(keys.length);
}

describe('Submitter on the emulator', () => {
  it('puts every message on the topic exactly once, with many in flight, and journals id before receipt', async () => {
    const { topicId, keys, journal, submitter } = await setup(40, 'basic', { window: 16 });
    const outcomes = await Promise.all(keys.map((key) => submitter.submit({ key, message: messageFor(key) })));
    await journal.close();
    expect(outcomes.every((o) => o.status === 'confirmed')).toBe(true);
    const seqs = outcomes.map((o) => (o as Extract<SubmitOutcome, { status: 'confirmed' }>).seq).sort((a, b) => a - b);
    expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expectExactlyOnce(await readTopic(h.mirror, topicId, 40), keys);

    const { state } = await readJournal(journal.path);
    for (const key of keys) {
      const s = state.signals.get(key)!;
      expect(s.txIds).toHaveLength(1);
      expect(s.receipt?.txId).toBe(s.txIds[0]!.txId);
    }
    // The tx record of each message precedes its receipt record in the file.
    const lines = (await import('node:fs'))
      .readFileSync(journal.path, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { t: string; key?: string });
    for (const key of keys) {
      const txAt = lines.findIndex((l) => l.t === 'tx' && l.key === key);
      const receiptAt = lines.findIndex((l) => l.t === 'receipt' && l.key === key);
      expect(txAt).toBeGreaterThan(0);
      expect(receiptAt).toBeGreaterThan(txAt);
    }
  });

  it('completes through injected BUSY, PLATFORM_TRANSACTION_NOT_CREATED and gRPC UNAVAILABLE', async () => {
    const { topicId, keys, journal, submitter } = await setup(30, 'faults', { window: 8 });
    h.node.faults.injectPrecheck('submitMessage', 'BUSY', 12);
    h.node.faults.injectPrecheck('submitMessage', 'PLATFORM_TRANSACTION_NOT_CREATED', 4);
    h.node.faults.injectGrpcError('submitMessage', 14, 3);
    h.node.faults.injectGrpcError('getTransactionReceipts', 14, 2);
    const outcomes = await Promise.all(keys.map((key) => submitter.submit({ key, message: messageFor(key) })));
    h.node.faults.clear();
    await journal.close();
    expect(submitter.fatal).toBeUndefined();
    expect(submitter.stats.retries).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.status !== 'confirmed')).toEqual([]);
    expectExactlyOnce(await readTopic(h.mirror, topicId, 30), keys);
  });

  it('counts DUPLICATE_TRANSACTION as success when an id that already landed is sent again', async () => {
    const { topicId, journal, submitter } = await setup(1, 'dup');
    const key = 'dup-0';
    const first = await submitter.submit({ key, message: messageFor(key) });
    expect(first.status).toBe('confirmed');
    const { state } = await readJournal(journal.path);
    const prior = state.signals.get(key)!.txIds.map((t) => ({ ...t }));
    // As after a crash between send and receipt: the same id is sent again.
    const again = await submitter.submit({ key, message: messageFor(key), prior });
    await journal.close();
    expect(again).toMatchObject({
      status: 'confirmed',
      duplicate: true,
      txId: prior[0]!.txId,
      seq: (first as { seq: number }).seq,
    });
    expectExactlyOnce(await readTopic(h.mirror, topicId, 1), [key]);
  });

  it('after an id expired: finds it on the mirror node if it landed, re-issues a journaled id if it did not', async () => {
    let offsetMs = 0;
    const { topicId, journal, submitter } = await setup(2, 'exp', {
      now: () => Date.now() + offsetMs,
      mirrorGraceMs: 0,
    });

    // landed: sent by hand under a pre-set id, receipt never read by the submitter.
    const landedId = TransactionId.generate(h.node.operator.accountId);
    const tx = await new TopicMessageSubmitTransaction()
      .setTopicId(topicId)
      .setMessage(messageFor('exp-0'))
      .setTransactionId(landedId)
      .freezeWith(h.client)
      .sign(PrivateKey.fromStringDer(h.node.operator.privateKey));
    await (await tx.execute(h.client)).getReceipt(h.client);
    // never sent: an id from long ago.
    const oldId = TransactionId.withValidStart(
      TransactionId.generate(h.node.operator.accountId).accountId!,
      new Timestamp(Math.floor(Date.now() / 1000) - 3600, 0),
    );

    offsetMs = 200_000; // the submitter now believes both ids are past their 120 s validity
    const [a, b] = await Promise.all([
      submitter.submit({
        key: 'exp-0',
        message: messageFor('exp-0'),
        prior: [{ txId: landedId.toString(), validSeconds: 120, consumed: false }],
      }),
      submitter.submit({
        key: 'exp-1',
        message: messageFor('exp-1'),
        prior: [{ txId: oldId.toString(), validSeconds: 120, consumed: false }],
      }),
    ]);
    await journal.close();
    expect(a).toMatchObject({ status: 'confirmed', via: 'mirror', duplicate: true, txId: landedId.toString() });
    expect(b).toMatchObject({ status: 'confirmed', via: 'receipt' });
    expect((b as { txId: string }).txId).not.toBe(oldId.toString());
    expect(submitter.stats.reissued).toBe(1);
    expectExactlyOnce(await readTopic(h.mirror, topicId, 2), ['exp-0', 'exp-1']);
    const lines = (await import('node:fs')).readFileSync(journal.path, 'utf8');
    expect(lines).toContain('"reason":"expired"');
  });

  it('stops on a submit key the operator does not hold: clear error, nothing lost, nothing more sent', async () => {
    const other = PrivateKey.generateED25519();
    const { topicId } = await createSignalTopic(h.client, { submitKey: other.publicKey });
    const keys = Array.from({ length: 20 }, (_, i) => `locked-${i}`);
    const journal = await journalWith(tmp.dir, keys, topicId);
    const submitter = new Submitter({
      client: h.client,
      signer: h.signer,
      operatorId: h.node.operator.accountId,
      topicId,
      journal,
      memo: TRANSACTION_MEMOS.signal,
      mirror: h.mirror,
      window: 4,
    });
    const outcomes = await Promise.all(keys.map((key) => submitter.submit({ key, message: messageFor(key) })));
    await journal.close();
    expect(submitter.fatal?.code).toBe('SUBMIT_INVALID_SIGNATURE');
    expect(submitter.fatal?.message).toContain('INVALID_SIGNATURE');
    expect(submitter.fatal?.hint).toMatch(/submit key/);
    expect(outcomes.every((o) => o.status === 'unsent')).toBe(true);
    // Only the first window was ever sent.
    expect(submitter.stats.sent).toBeLessThanOrEqual(4);
    const { state } = await readJournal(journal.path);
    expect([...state.signals.values()].filter((s) => s.message && !s.receipt)).toHaveLength(20);
    expect(state.failures.some((f) => f.fatal && f.code === 'INVALID_SIGNATURE')).toBe(true);
  });

  it('stops on an unknown topic with INVALID_TOPIC_ID', async () => {
    const journal = await journalWith(tmp.dir, ['nt-0'], '0.0.999999');
    const submitter = new Submitter({
      client: h.client,
      signer: h.signer,
      operatorId: h.node.operator.accountId,
      topicId: '0.0.999999',
      journal,
      memo: TRANSACTION_MEMOS.signal,
      mirror: h.mirror,
    });
    const outcome = await submitter.submit({ key: 'nt-0', message: messageFor('nt-0') });
    await journal.close();
    expect(outcome.status).toBe('unsent');
    expect(submitter.fatal?.code).toBe('SUBMIT_INVALID_TOPIC_ID');
  });

  it('enforces the fee cap: stops before a submission could pass it', async () => {
    const balance = async (_final: boolean) =>
      (
        await new (
          await import('@hashgraph/sdk')
        ).AccountBalanceQuery()
          .setAccountId(h.node.operator.accountId)
          .execute(h.client)
      ).hbars
        .toTinybars()
        .toBigInt();
    // Estimate 0.001 ℏ, cap 0.0105 ℏ: at most 10 submissions may be started.
    const fees = new FeeMeter({ capTinybar: 1_050_000n, estimateTinybar: 100_000n, balance });
    const { keys, journal, submitter } = await setup(25, 'cap', { fees, window: 4 });
    await fees.begin();
    const outcomes = await Promise.all(keys.map((key) => submitter.submit({ key, message: messageFor(key) })));
    await fees.end();
    await journal.close();
    expect(submitter.fatal?.code).toBe('FEE_CAP');
    const confirmed = outcomes.filter((o) => o.status === 'confirmed').length;
    expect(confirmed).toBeGreaterThan(0);
    expect(confirmed).toBeLessThanOrEqual(10);
    expect(fees.spentTinybar).toBeLessThanOrEqual(1_050_000n);
    expect(fees.spentTinybar).toBeGreaterThan(0n);
  });
});
