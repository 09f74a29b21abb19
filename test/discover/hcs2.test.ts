import { describe, expect, it } from 'vitest';
import { Hcs2Folder, parseHcs2Memo } from '../../src/discover/hcs2.js';
import { SkipList } from '../../src/discover/skips.js';
import { checkTrackedChanges, msg, randomMessages } from './fixtures.js';

const T = '0.0.900';
const reg = (metadata: unknown, t_id = '0.0.1') => ({ p: 'hcs-2', op: 'register', t_id, metadata });

function fold(indexed: boolean, messages: ReturnType<typeof msg>[]) {
  const skips = new SkipList();
  const folder = new Hcs2Folder(T, indexed, skips);
  for (const m of messages) folder.add(m);
  return { folder, entries: folder.entries(), skipped: skips.list() };
}

describe('parseHcs2Memo', () => {
  it('reads indexed and ttl, and rejects other memos', () => {
    expect(parseHcs2Memo('hcs-2:0:86400')).toEqual({ indexed: true, ttl: 86400 });
    expect(parseHcs2Memo(' hcs-2:1:60 ')).toEqual({ indexed: false, ttl: 60 });
    expect(parseHcs2Memo('hcs-2:2:60')).toBeNull();
    expect(parseHcs2Memo('hcs-10:0:60:3')).toBeNull();
    expect(parseHcs2Memo('')).toBeNull();
  });
});

describe('Hcs2Folder (indexed)', () => {
  it('applies register, update and delete in sequence order; uid is the register sequence number', () => {
    const { entries, skipped } = fold(true, [
      msg(1, reg('a')),
      msg(2, reg('b')),
      msg(3, reg({ inline: true }, '0.0.3')),
      msg(4, { p: 'hcs-2', op: 'update', uid: '2', t_id: '0.0.22', metadata: 'b2' }),
      msg(5, { p: 'hcs-2', op: 'delete', uid: '1' }),
      msg(6, { p: 'hcs-2', op: 'update', uid: 99, metadata: 'x' }),
      msg(7, { p: 'hcs-2', op: 'delete', uid: '1' }),
    ]);
    expect(entries).toEqual([
      expect.objectContaining({ uid: 2, seq: 4, tId: '0.0.22', metadata: 'b2' }),
      expect.objectContaining({ uid: 3, seq: 3, tId: '0.0.3', metadata: { inline: true } }),
    ]);
    expect(skipped).toEqual([
      { ref: `hcs://2/${T}#6`, reason: 'update of uid 99, which is not a live entry' },
      { ref: `hcs://2/${T}#7`, reason: 'delete of uid 1, which is not a live entry' },
    ]);
  });

  it('lets an update name either end of a chunked register', () => {
    const { entries } = fold(true, [
      msg(7, reg('long'), { firstSequenceNumber: 5, chunks: 3 }),
      msg(8, { p: 'hcs-2', op: 'update', uid: '5', metadata: 'changed' }),
    ]);
    expect(entries).toEqual([expect.objectContaining({ uid: 7, metadata: 'changed' })]);
  });

  it('gives a reason for every malformed message and keeps going', () => {
    const { entries, skipped } = fold(true, [
      msg(1, '{"p":"hcs-2",'),
      msg(2, { p: 'hcs-20', op: 'register', t_id: '0.0.1' }),
      msg(3, { p: 'hcs-2', op: 'mint' }),
      msg(4, reg('x'.repeat(9000))),
      msg(5, Buffer.from([0xff, 0xfe, 0x7b])),
      msg(6, '[1,2]'),
      msg(7, { p: 'hcs-2', op: 'register' }),
      msg(8, { p: 'hcs-2', op: 'register', t_id: 'topic-1', metadata: 'm' }),
      msg(9, { ...reg('m'), m: 'y'.repeat(501) }),
      msg(10, { p: 'hcs-2', op: 'delete', uid: 'abc' }),
      msg(11, 'x'.repeat(30_000)),
      msg(12, '{"p":"hcs-2","op":"constructor"}'),
      msg(13, '{"p":"hcs-2","op":"__proto__","__proto__":{"op":"register"}}'),
      msg(14, reg('ok')),
    ]);
    expect(entries.map((e) => e.uid)).toEqual([14]);
    const reasons = skipped.map((s) => s.reason);
    expect(reasons).toEqual([
      expect.stringMatching(/^invalid JSON/),
      'wrong protocol: p is "hcs-20", expected "hcs-2"',
      'unknown op "mint"',
      'metadata is 9000 bytes; the limit is 8192',
      'message is not UTF-8 text',
      'message is JSON but not an object',
      'invalid register: register needs t_id or metadata',
      expect.stringMatching(/^invalid register: t_id: must look like 0\.0\.1234/),
      expect.stringMatching(/^invalid register: m: memo \(m\) is limited to 500/),
      expect.stringMatching(/^invalid delete: uid/),
      'message is 30000 bytes; the limit is 20480',
      'unknown op "constructor"',
      'unknown op "__proto__"',
    ]);
    expect(skipped.map((s) => s.ref)).toEqual(Array.from({ length: 13 }, (_, i) => `hcs://2/${T}#${i + 1}`));
  });

  it('stops at the first migrate and reports what follows it', () => {
    const { folder, entries, skipped } = fold(true, [
      msg(1, reg('a')),
      msg(2, { p: 'hcs-2', op: 'migrate', t_id: '0.0.777' }),
      msg(3, reg('b')),
      msg(4, { p: 'hcs-2', op: 'migrate', t_id: '0.0.778' }),
    ]);
    expect(folder.migrateTo).toBe('0.0.777');
    expect(entries.map((e) => e.uid)).toEqual([1]);
    expect(skipped.map((s) => s.reason)).toEqual([
      'after the migrate at #2; the registry moved to 0.0.777',
      'after the migrate at #2; the registry moved to 0.0.777',
    ]);
  });
});

describe('Hcs2Folder (non-indexed)', () => {
  it('keeps only the latest register and refuses update/delete', () => {
    const { entries, skipped } = fold(false, [
      msg(1, reg('a')),
      msg(2, reg('b')),
      msg(3, { p: 'hcs-2', op: 'delete', uid: '2' }),
      msg(4, 'junk'),
    ]);
    expect(entries).toEqual([expect.objectContaining({ uid: 2, metadata: 'b' })]);
    expect(skipped.map((s) => s.reason)).toEqual([
      'delete is not valid in a non-indexed registry',
      expect.stringMatching(/^invalid JSON/),
    ]);
  });
});

describe('agreement with the standards-sdk HCS-2 schemas', () => {
  it('accepts every message the SDK schemas accept (with numeric uids)', async () => {
    const sdk = (await import('@hashgraphonline/standards-sdk')) as unknown as Record<
      string,
      { safeParse(v: unknown): { success: boolean } }
    >;
    const valid = [
      { p: 'hcs-2', op: 'register', t_id: '0.0.123456', metadata: 'hcs://1/0.0.456789', m: 'register t' },
      { p: 'hcs-2', op: 'register', t_id: '0.0.123456' },
      { p: 'hcs-2', op: 'register', t_id: '0.0.1', ttl: 60 },
      { p: 'hcs-2', op: 'update', uid: '1', t_id: '0.0.123456', metadata: 'hcs://1/0.0.456789', m: 'update' },
      { p: 'hcs-2', op: 'delete', uid: '2', m: 'remove entry' },
    ];
    const schemaFor: Record<string, string> = {
      register: 'registerMessageSchema',
      update: 'updateMessageSchema',
      delete: 'deleteMessageSchema',
    };
    for (const v of valid) expect(sdk[schemaFor[v.op]!]!.safeParse(v).success).toBe(true);
    const { skipped } = fold(
      true,
      valid.map((v, i) => msg(i + 1, v)),
    );
    expect(skipped).toEqual([]);
    // And both refuse an over-long memo.
    const long = { p: 'hcs-2', op: 'register', t_id: '0.0.1', m: 'z'.repeat(501) };
    expect(sdk.registerMessageSchema!.safeParse(long).success).toBe(false);
    expect(fold(true, [msg(1, long)]).skipped).toHaveLength(1);
  });
});

describe('Hcs2Folder change tracking (hcs25 watch reads only what changed)', () => {
  const body = (seq: number, rnd: () => number) => {
    const r = rnd();
    const uid = String(1 + Math.floor(rnd() * seq));
    if (r < 0.5) return reg(`m${seq}`, `0.0.${seq}`);
    if (r < 0.7) return { p: 'hcs-2', op: 'update', uid, metadata: `u${seq}` };
    if (r < 0.8) return { p: 'hcs-2', op: 'update', uid, t_id: `0.0.${seq}` };
    if (r < 0.95) return { p: 'hcs-2', op: 'delete', uid };
    return '{"p":"hcs-2",';
  };

  it('takeChanged + entryOf keep a copy equal to entries() after every message (indexed and not)', () => {
    for (const indexed of [true, false]) {
      for (const seed of [1, 2, 3]) {
        const changed = checkTrackedChanges(
          new Hcs2Folder(T, indexed, new SkipList(0)),
          randomMessages(400, seed, body),
        );
        expect(changed).toBeGreaterThan(200);
      }
    }
  });

  it('tracks nothing until asked (a one-off fold keeps no change set)', () => {
    const folder = new Hcs2Folder(T, true, new SkipList(0));
    folder.add(msg(1, reg('a')));
    expect(folder.takeChanged()).toEqual([]);
    folder.trackChanges();
    folder.add(msg(2, reg('b')));
    folder.add(msg(3, { p: 'hcs-2', op: 'update', uid: '1', metadata: 'a2' }));
    expect(folder.takeChanged()).toEqual([1, 2]);
    expect(folder.takeChanged()).toEqual([]);
  });

  it('release: the entry forgets its metadata (null) until an update brings new metadata; t_id alone leaves it null', () => {
    const folder = new Hcs2Folder(T, true, new SkipList());
    folder.trackChanges();
    folder.add(msg(1, reg({ name: 'a' })));
    folder.add(msg(2, { p: 'hcs-2', op: 'register', t_id: '0.0.2' }));
    expect(folder.takeChanged()).toEqual([1, 2]);
    folder.release(1);
    folder.release(2);
    expect(folder.entryOf(1)).toEqual({ uid: 1, seq: 1, tId: '0.0.1', metadata: null });
    // An entry without metadata has nothing to release: its agent is built from t_id.
    expect(folder.entryOf(2)).toEqual({ uid: 2, seq: 2, tId: '0.0.2' });
    folder.add(msg(3, { p: 'hcs-2', op: 'update', uid: '1', t_id: '0.0.9' }));
    expect(folder.takeChanged()).toEqual([1]);
    expect(folder.entryOf(1)).toEqual({ uid: 1, seq: 3, tId: '0.0.9', metadata: null });
    folder.add(msg(4, { p: 'hcs-2', op: 'update', uid: 1, metadata: { name: 'b' } }));
    expect(folder.entryOf(1)).toEqual({ uid: 1, seq: 4, tId: '0.0.9', metadata: { name: 'b' } });
    folder.add(msg(5, { p: 'hcs-2', op: 'delete', uid: 1 }));
    folder.release(1);
    expect(folder.entryOf(1)).toBeUndefined();
  });
});
