import { describe, expect, it } from 'vitest';
import { Hcs10Folder, parseHcs10RegistryMemo } from '../../src/discover/hcs10.js';
import { SkipList } from '../../src/discover/skips.js';
import { checkTrackedChanges, msg, randomMessages } from './fixtures.js';

const T = '0.0.910';

function fold(messages: ReturnType<typeof msg>[]) {
  const skips = new SkipList();
  const folder = new Hcs10Folder(T, skips);
  for (const m of messages) folder.add(m);
  return { folder, entries: folder.entries(), skipped: skips.list() };
}

describe('parseHcs10RegistryMemo', () => {
  it('reads registry memos with and without a metadata topic, and nothing else', () => {
    expect(parseHcs10RegistryMemo('hcs-10:0:60:3')).toEqual({ ttl: 60 });
    expect(parseHcs10RegistryMemo('hcs-10:0:86400:3:0.0.998877')).toEqual({
      ttl: 86400,
      metadataTopicId: '0.0.998877',
    });
    expect(parseHcs10RegistryMemo('hcs-10:0:60:0:0.0.5')).toBeNull(); // an inbound topic
    expect(parseHcs10RegistryMemo('hcs-2:0:60')).toBeNull();
  });
});

describe('Hcs10Folder', () => {
  it('accepts every register shape published so far', () => {
    const { entries, skipped } = fold([
      msg(1, { p: 'hcs-10', op: 'register', account_id: '0.0.101', m: 'Registering AI agent.' }),
      msg(2, { p: 'hcs-10', op: 'register', account_id: '0.0.102', inbound_topic_id: '0.0.202' }),
      msg(3, {
        p: 'hcs-10',
        op: 'register',
        account_id: '0.0.103',
        inbound_topic_id: '0.0.203',
        outbound_topic_id: '0.0.303',
        metadata: {
          name: 'Draft Agent',
          description: 'd',
          tags: ['a'],
          type: 'autonomous',
          version: '1',
          socials: { x: 'y' },
        },
      }),
      msg(4, {
        p: 'hcs-10',
        op: 'register',
        account_id: '0.0.104',
        requester_topic_id: '0.0.204',
        metadata: { name: 'Jan', socials: { twitter: 't' } },
      }),
    ]);
    expect(skipped).toEqual([]);
    expect(entries).toEqual([
      expect.objectContaining({ uid: 1, accountId: '0.0.101' }),
      expect.objectContaining({ uid: 2, accountId: '0.0.102', inboundTopicId: '0.0.202' }),
      expect.objectContaining({
        uid: 3,
        accountId: '0.0.103',
        inboundTopicId: '0.0.203',
        outboundTopicId: '0.0.303',
        metadata: expect.objectContaining({ name: 'Draft Agent' }),
      }),
      expect.objectContaining({ uid: 4, accountId: '0.0.104', inboundTopicId: '0.0.204' }),
    ]);
    expect(entries[0]).not.toHaveProperty('inboundTopicId');
  });

  it('deletes by uid and by account id (old form), and keeps the latest registration per account', () => {
    const { entries, skipped } = fold([
      msg(1, { p: 'hcs-10', op: 'register', account_id: '0.0.101' }),
      msg(2, { p: 'hcs-10', op: 'register', account_id: '0.0.102' }),
      msg(3, { p: 'hcs-10', op: 'register', account_id: '0.0.103' }),
      msg(4, { p: 'hcs-10', op: 'register', account_id: '0.0.101', inbound_topic_id: '0.0.201' }),
      msg(5, { p: 'hcs-10', op: 'delete', uid: '2' }),
      msg(6, { p: 'hcs-10', op: 'delete', account_id: '0.0.103' }),
      msg(7, { p: 'hcs-10', op: 'delete', uid: '2' }),
      msg(8, { p: 'hcs-10', op: 'delete', account_id: '0.0.999' }),
      msg(9, { p: 'hcs-10', op: 'delete' }),
    ]);
    expect(entries).toEqual([expect.objectContaining({ uid: 4, accountId: '0.0.101', inboundTopicId: '0.0.201' })]);
    expect(skipped.map((s) => `${s.ref} ${s.reason}`)).toEqual([
      `hcs://2/${T}#7 delete of uid 2, which is not a live registration`,
      `hcs://2/${T}#8 delete of account 0.0.999, which is not registered`,
      `hcs://2/${T}#9 invalid delete: delete needs uid (or account_id, old form)`,
      `hcs://2/${T}#1 account 0.0.101 registered again at #4`,
    ]);
  });

  it("a delete by account removes exactly that account's live registrations, after deletes by uid", () => {
    const { entries, skipped } = fold([
      msg(1, { p: 'hcs-10', op: 'register', account_id: '0.0.101' }),
      msg(2, { p: 'hcs-10', op: 'register', account_id: '0.0.102' }),
      msg(3, { p: 'hcs-10', op: 'register', account_id: '0.0.101', inbound_topic_id: '0.0.201' }),
      msg(4, { p: 'hcs-10', op: 'delete', uid: '1' }),
      msg(5, { p: 'hcs-10', op: 'delete', uid: 3 }),
      msg(6, { p: 'hcs-10', op: 'delete', account_id: '0.0.101' }),
      msg(7, { p: 'hcs-10', op: 'register', account_id: '0.0.101' }),
      msg(8, { p: 'hcs-10', op: 'register', account_id: '0.0.103' }),
      msg(9, { p: 'hcs-10', op: 'delete', account_id: '0.0.101' }),
      msg(10, { p: 'hcs-10', op: 'delete', uid: '7' }),
    ]);
    expect(entries.map((e) => `${e.uid} ${e.accountId}`)).toEqual(['2 0.0.102', '8 0.0.103']);
    expect(skipped.map((s) => `${s.ref} ${s.reason}`)).toEqual([
      `hcs://2/${T}#6 delete of account 0.0.101, which is not registered`,
      `hcs://2/${T}#10 delete of uid 7, which is not a live registration`,
    ]);
  });

  it('reasons for hostile messages, and migrate', () => {
    const { folder, entries, skipped } = fold([
      msg(1, { p: 'hcs-2', op: 'register', t_id: '0.0.5' }),
      msg(2, { p: 'hcs-10', op: 'connection_request', operator_id: '0.0.1@0.0.2' }),
      msg(3, { p: 'hcs-10', op: 'register', account_id: 'alice' }),
      msg(4, { p: 'hcs-10', op: 'register', account_id: '0.0.5', metadata: { blob: 'x'.repeat(9000) } }),
      msg(5, { p: 'hcs-10', op: 'register', account_id: '0.0.6' }),
      msg(6, { p: 'hcs-10', op: 'migrate', t_id: '0.0.950' }),
      msg(7, { p: 'hcs-10', op: 'register', account_id: '0.0.7' }),
    ]);
    expect(folder.migrateTo).toBe('0.0.950');
    expect(entries.map((e) => e.accountId)).toEqual(['0.0.6']);
    expect(skipped.map((s) => s.reason)).toEqual([
      'wrong protocol: p is "hcs-2", expected "hcs-10"',
      'unknown op "connection_request"',
      expect.stringMatching(/^invalid register: account_id/),
      expect.stringMatching(/^metadata is \d+ bytes; the limit is 8192$/),
      'after the migrate at #6; the registry moved to 0.0.950',
    ]);
  });
});

describe('Hcs10Folder change tracking (hcs25 watch reads only what changed)', () => {
  // Few accounts, so registrations supersede each other and deleting the latest brings an earlier one back.
  const body = (seq: number, rnd: () => number) => {
    const r = rnd();
    const account = `0.0.${100 + Math.floor(rnd() * 12)}`;
    if (r < 0.55) return { p: 'hcs-10', op: 'register', account_id: account, inbound_topic_id: `0.0.${seq}` };
    if (r < 0.85) return { p: 'hcs-10', op: 'delete', uid: String(1 + Math.floor(rnd() * seq)) };
    return { p: 'hcs-10', op: 'delete', account_id: account };
  };

  it('takeChanged + entryOf keep a copy equal to entries() after every message', () => {
    for (const seed of [1, 2, 3, 4]) {
      const changed = checkTrackedChanges(new Hcs10Folder(T, new SkipList(0)), randomMessages(400, seed, body));
      expect(changed).toBeGreaterThan(200);
    }
  });
});
