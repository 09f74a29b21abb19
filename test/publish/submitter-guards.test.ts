import { Client, PrivateKey } from '@hashgraph/sdk';
import { afterAll, describe, expect, it } from 'vitest';
import { MirrorRestClient } from '../../src/hedera/mirror-rest.js';
import { readJournal } from '../../src/publish/journal.js';
import { operatorSigner } from '../../src/publish/signer.js';
import { Submitter } from '../../src/publish/submitter.js';
import { TRANSACTION_MEMOS } from '../../src/format/protocol.js';
import { journalWith, tempDir } from './helpers.js';

const tmp = tempDir();
// Nothing listens here: these guards act before anything is sent.
const client = Client.forNetwork({ '127.0.0.1:1': '0.0.3' });
const mirror = new MirrorRestClient({ baseUrl: 'http://127.0.0.1:1' });
afterAll(async () => {
  client.close();
  await mirror.close();
  tmp.cleanup();
});

function submitterFor(journal: Awaited<ReturnType<typeof journalWith>>): Submitter {
  return new Submitter({
    client,
    signer: operatorSigner(PrivateKey.generateED25519()),
    operatorId: '0.0.2',
    topicId: '0.0.1001',
    journal,
    memo: TRANSACTION_MEMOS.signal,
    mirror,
    retryBudgetMs: 200,
    minBackoffMs: 10,
    maxBackoffMs: 20,
    submitTimeoutMs: 500,
  });
}

describe('Submitter guards', () => {
  it('resolves, and stops submission, when the journal cannot take a transaction id', async () => {
    const journal = await journalWith(tmp.dir, ['j-0', 'j-1']);
    const submitter = submitterFor(journal);
    await journal.close(); // every later write fails, as on a full disk
    const outcomes = await Promise.all(['j-0', 'j-1'].map((key) => submitter.submit({ key, message: '{"p":"test"}' })));
    await submitter.drain();
    expect(outcomes.map((o) => o.status)).toEqual(['unsent', 'unsent']);
    expect(submitter.fatal?.code).toBe('SUBMIT_JOURNAL');
    expect(submitter.stats.sent).toBe(0);
  });

  it('refuses a journaled message over 1024 bytes without giving it an id, and goes on with the others', async () => {
    const journal = await journalWith(tmp.dir, ['big-0']);
    const submitter = submitterFor(journal);
    const outcome = await submitter.submit({
      key: 'big-0',
      message: JSON.stringify({ p: 'test', pad: 'é'.repeat(520) }),
    });
    await journal.close();
    expect(outcome.status).toBe('unsent');
    expect(outcome.status === 'unsent' && outcome.reason).toMatch(/1061 bytes.*limit is 1024/);
    expect(submitter.fatal).toBeUndefined();
    const { state } = await readJournal(journal.path);
    expect(state.signals.get('big-0')!.txIds).toEqual([]);
    expect(state.failures).toMatchObject([{ key: 'big-0', code: 'MESSAGE_TOO_LARGE', fatal: false }]);
  });
});
