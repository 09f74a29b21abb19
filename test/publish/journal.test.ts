import { appendFileSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  Journal,
  JournalError,
  hasResult,
  listRuns,
  packBytes,
  parseJournal,
  readJournal,
  resultKey,
  revealKey,
  signalReceipt,
} from '../../src/publish/journal.js';
import { journalWith, messageFor, tempDir, TEST_AGENT } from './helpers.js';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** Any journal written in `dir` so far. */
function journalPathOf(dir: string): string {
  return `${dir}/runs/${readdirSync(`${dir}/runs`).find((f) => f.endsWith('.jsonl'))!}`;
}

const TX = (n: number) => `0.0.2@1700000000.${String(n).padStart(9, '0')}`;

describe('run journal', () => {
  it('is created 0600 in a 0700 directory and lists by run id', async () => {
    const journal = await journalWith(tmp.dir, ['a']);
    await journal.close();
    expect(statSync(journal.path).mode & 0o777).toBe(0o600);
    expect(statSync(`${tmp.dir}/runs`).mode & 0o777).toBe(0o700);
    expect(await listRuns(tmp.dir)).toContain(journal.runId);
  });

  it('writes each record as one JSON line, its fields in order and the time last (the format old runs resume from)', async () => {
    const journal = await journalWith(`${tmp.dir}/format`, []);
    await journal.write({ t: 'fees', spentTinybar: '12', confirmed: 3 });
    await journal.close();
    const lines = readFileSync(journal.path, 'utf8').split('\n');
    expect(lines.at(-1)).toBe('');
    expect(lines[0]).toMatch(
      /^\{"t":"start","v":1,"run":"[0-9A-Z]{26}",.*,"at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"\}$/,
    );
    expect(lines.at(-2)).toMatch(
      /^\{"t":"fees","spentTinybar":"12","confirmed":3,"at":"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"\}$/,
    );
    const resumed = await Journal.open(`${tmp.dir}/format`, journal.runId);
    await resumed.journal.close();
    expect(resumed.state.spentTinybar).toBe(12n);
  });

  it("writes a registry's start record as the one JSON line of the record, whatever the number of agents", async () => {
    for (const count of [0, 1, 1_000, 2_501]) {
      const start = {
        run: '01JDX3V9W5Q8K6T2N4M7P1R0ZC',
        seed: 'seed "agents":[] in a string',
        runKey: Buffer.alloc(32, 7).toString('base64url'),
        topic: '0.0.1001',
        config: {
          network: 'local' as const,
          agentsFile: 'agents.json',
          evals: ['availability' as const],
          concurrency: 1,
          budgetMs: 1000,
          maxFeeHbar: 5,
          keepResponses: true,
        },
        agents: Array.from({ length: count }, (_, i) => ({ ...TEST_AGENT, subject: `${TEST_AGENT.subject}${i}` })),
      };
      const journal = await Journal.create(`${tmp.dir}/start-${count}`, start);
      await journal.close();
      const line = readFileSync(journal.path, 'utf8').split('\n')[0]!;
      const at = (JSON.parse(line) as { at: string }).at;
      expect(line).toBe(JSON.stringify({ t: 'start', v: 1, ...start, at }));
    }
  });

  it('gets its name only with its start record on disk: a create that fails before the sync leaves no journal', async () => {
    const dir = `${tmp.dir}/unsynced`;
    const probe = await open(`${tmp.dir}/probe`, 'w');
    const handle = Object.getPrototypeOf(probe) as { datasync(): Promise<void> };
    await probe.close();
    const failing = vi
      .spyOn(handle, 'datasync')
      .mockRejectedValueOnce(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' }));
    try {
      await expect(journalWith(dir, [])).rejects.toThrow(/EIO/);
    } finally {
      failing.mockRestore();
    }
    // A restart would find no journal to refuse for lacking a start record, and no stray file under a run's name.
    expect(await listRuns(dir)).toEqual([]);
    expect(readdirSync(`${dir}/runs`)).toEqual([]);
    const journal = await journalWith(dir, ['a']);
    await journal.close();
    expect((await readJournal(journal.path)).state.results).toBe(1);
    expect(readdirSync(`${dir}/runs`)).toEqual([`${journal.runId}.jsonl`]);
    // A second journal for the same run is refused and leaves the first as it was.
    const before = readFileSync(journal.path, 'utf8');
    const { start } = (await readJournal(journal.path)).state;
    await expect(Journal.create(dir, start)).rejects.toThrow(/already exists/);
    expect(readFileSync(journal.path, 'utf8')).toBe(before);
    expect(readdirSync(`${dir}/runs`)).toEqual([`${journal.runId}.jsonl`]);
  });

  it("rebuilds packs: the bytes as submitted, each signal at its index, the pack's ids and receipt", async () => {
    const journal = await journalWith(tmp.dir, ['k1', 'k2', 'k3']);
    const zlib = Buffer.from([0x78, 0xda, 1, 2, 3, 0xff]);
    journal.append({
      t: 'pack',
      key: 'pack|0',
      encoding: 'zlib',
      data: zlib.toString('base64'),
      bytes: zlib.length,
      signals: ['k2', 'k1'],
    });
    journal.append({ t: 'pack', key: 'pack|1', encoding: 'json', data: '{"p":"hcs-25"}', bytes: 14, signals: ['k3'] });
    journal.append({ t: 'tx', key: 'pack|0', txId: TX(1), validSeconds: 120 });
    journal.append({ t: 'receipt', key: 'pack|0', txId: TX(1), seq: 4, duplicate: true });
    journal.append({ t: 'landed', entries: [{ key: 'pack|0', seq: 4, consensusTimestamp: '1700000001.000000001' }] });
    journal.append({ t: 'tx', key: 'pack|1', txId: TX(2), validSeconds: 120 });
    await journal.close();

    const { state } = await readJournal(journal.path);
    expect([...state.packs.keys()]).toEqual(['pack|0', 'pack|1']);
    expect(packBytes(state.packs.get('pack|0')!).equals(zlib)).toBe(true);
    expect(packBytes(state.packs.get('pack|1')!).toString('utf8')).toBe('{"p":"hcs-25"}');
    expect(state.signals.get('k1')!.pack).toEqual({ key: 'pack|0', index: 1 });
    expect(signalReceipt(state, state.signals.get('k1')!)).toEqual({
      txId: TX(1),
      seq: 4,
      duplicate: true,
      consensusTimestamp: '1700000001.000000001',
      index: 1,
    });
    expect(signalReceipt(state, state.signals.get('k2')!)).toMatchObject({ seq: 4, index: 0 });
    // Sent, not confirmed: a resume resends pack|1 under its journaled id.
    expect(signalReceipt(state, state.signals.get('k3')!)).toBeUndefined();
    expect(state.packs.get('pack|1')!.txIds).toEqual([{ txId: TX(2), validSeconds: 120, consumed: false }]);
  });

  it("gives a pack's bytes an ArrayBuffer of their own size, not a window on Node's shared pool", () => {
    // A run holds each confirmed pack's bytes for its read-back: a window on the 8 KiB pool kept all of it alive.
    const zlib = Buffer.from([0x78, 0xda, ...Array.from({ length: 700 }, (_, i) => i & 0xff)]);
    for (const pack of [
      { encoding: 'zlib' as const, data: zlib.toString('base64') },
      { encoding: 'json' as const, data: '{"p":"hcs-25","é":1}' },
    ]) {
      const bytes = packBytes(pack);
      expect(bytes.equals(pack.encoding === 'zlib' ? zlib : Buffer.from(pack.data, 'utf8'))).toBe(true);
      expect([bytes.byteOffset, bytes.buffer.byteLength]).toEqual([0, bytes.length]);
    }
    // Base64 with whitespace (byteLength overcounts it): exactly the decoded bytes.
    expect(packBytes({ encoding: 'zlib', data: 'eNo B\nAg==' }).equals(Buffer.from('eNo B\nAg==', 'base64'))).toBe(
      true,
    );
  });

  it('refuses a pack of a signal it has no result for, and a tx of an unknown pack', () => {
    const start = readFileSync(journalPathOf(tmp.dir), 'utf8').split('\n')[0]!;
    const at = '2026-01-01T00:00:00.000Z';
    const pack = JSON.stringify({
      t: 'pack',
      at,
      key: 'pack|0',
      encoding: 'json',
      data: '{}',
      bytes: 2,
      signals: ['nope'],
    });
    expect(() => parseJournal(`${start}\n${pack}\n`)).toThrow(JournalError);
    const tx = JSON.stringify({ t: 'tx', at, key: 'pack|3', txId: TX(1), validSeconds: 120 });
    expect(() => parseJournal(`${start}\n${tx}\n`)).toThrow(/pack pack\|3 before its pack record/);
  });

  it('rebuilds the run state: results, ids, receipts, consumed ids, fees, reveals', async () => {
    const journal = await journalWith(tmp.dir, ['k1', 'k2', 'k3']);
    journal.append({ t: 'tx', key: 'k1', txId: TX(1), validSeconds: 120 });
    journal.append({ t: 'receipt', key: 'k1', txId: TX(1), seq: 7 });
    journal.append({ t: 'tx', key: 'k2', txId: TX(2), validSeconds: 120 });
    journal.append({
      t: 'failure',
      key: 'k2',
      txId: TX(2),
      code: 'INVALID_SIGNATURE',
      message: 'x',
      fatal: true,
      consumed: true,
    });
    journal.append({ t: 'tx', key: 'k2', txId: TX(3), validSeconds: 120, reason: 'failed' });
    journal.append({ t: 'fees', spentTinybar: '12345', confirmed: 1 });
    journal.append({ t: 'landed', entries: [{ key: 'k1', seq: 7, consensusTimestamp: '1700000001.000000001' }] });
    journal.append({ t: 'tx', key: revealKey('0.0.9'), txId: TX(4), validSeconds: 120 });
    journal.append({ t: 'receipt', key: revealKey('0.0.9'), txId: TX(4), seq: 9 });
    journal.append({ t: 'end', status: 'stopped' });
    await journal.close();

    const { state, tornBytes } = await readJournal(journal.path);
    expect(tornBytes).toBe(0);
    expect(state.signals.get('k1')!.receipt).toEqual({
      txId: TX(1),
      seq: 7,
      consensusTimestamp: '1700000001.000000001',
    });
    expect(state.signals.get('k2')!.txIds).toEqual([
      { txId: TX(2), validSeconds: 120, consumed: true },
      { txId: TX(3), validSeconds: 120, consumed: false },
    ]);
    expect(state.signals.get('k3')!.txIds).toEqual([]);
    expect(state.signals.get('k3')!.message?.json).toContain('k3');
    expect(state.spentTinybar).toBe(12345n);
    expect(state.end?.status).toBe('stopped');
    expect(state.reveals.get('0.0.9')?.receipt?.seq).toBe(9);
  });

  it('refuses a journal that names no valid topic (a resume must fail clearly, never send)', async () => {
    const journal = await journalWith(`${tmp.dir}/badtopic`, ['math|x']);
    await journal.close();
    const text = readFileSync(journal.path, 'utf8').replace('"topic":"0.0.1001"', '"topic":"0.0.x"');
    writeFileSync(journal.path, text);
    await expect(Journal.open(`${tmp.dir}/badtopic`, journal.runId)).rejects.toThrow(/topic/);
    await expect(Journal.open(`${tmp.dir}/badtopic`, journal.runId)).rejects.toBeInstanceOf(JournalError);
  });

  it('ignores a torn last line and open() cuts it off before appending', async () => {
    const journal = await journalWith(tmp.dir, ['t1']);
    await journal.write({ t: 'tx', key: 't1', txId: TX(5), validSeconds: 120 });
    await journal.close();
    const whole = readFileSync(journal.path, 'utf8');
    appendFileSync(journal.path, '{"t":"receipt","key":"t1","txId":"0.0.2@17000');

    const read = await readJournal(journal.path);
    expect(read.tornBytes).toBeGreaterThan(0);
    expect(read.state.signals.get('t1')!.receipt).toBeUndefined();

    const { journal: reopened, state } = await Journal.open(tmp.dir, journal.runId);
    expect(state.signals.get('t1')!.txIds).toHaveLength(1);
    await reopened.write({ t: 'receipt', key: 't1', txId: TX(5), seq: 3 });
    await reopened.close();
    const after = readFileSync(journal.path, 'utf8');
    expect(after.startsWith(whole)).toBe(true);
    expect(
      after
        .split('\n')
        .filter(Boolean)
        .every((l) => JSON.parse(l)),
    ).toBe(true);
    expect((await readJournal(journal.path)).state.signals.get('t1')!.receipt?.seq).toBe(3);
  });

  it('reopen() appends without reading, but only after a whole last line, and takes the lock', async () => {
    const journal = await journalWith(tmp.dir, ['r1']);
    await expect(Journal.reopen(tmp.dir, journal.runId)).rejects.toThrow(/in use by process/);
    await journal.close();
    const whole = readFileSync(journal.path, 'utf8');

    const reopened = (await Journal.reopen(tmp.dir, journal.runId))!;
    expect(reopened).toBeInstanceOf(Journal);
    await expect(Journal.open(tmp.dir, journal.runId)).rejects.toThrow(/in use by process/);
    await reopened.write({ t: 'tx', key: 'r1', txId: TX(7), validSeconds: 120 });
    await reopened.close();
    expect(readFileSync(journal.path, 'utf8').startsWith(whole)).toBe(true);
    expect((await readJournal(journal.path)).state.signals.get('r1')!.txIds.map((t) => t.txId)).toEqual([TX(7)]);

    // A torn last line: not reopened (open() mends it), and the lock is given back.
    appendFileSync(journal.path, '{"t":"receipt","key":"r1"');
    expect(await Journal.reopen(tmp.dir, journal.runId)).toBeUndefined();
    expect(existsSync(`${journal.path}.lock`)).toBe(false);
    const { journal: mended } = await Journal.open(tmp.dir, journal.runId);
    await mended.close();
    expect(readFileSync(journal.path, 'utf8').endsWith('\n')).toBe(true);

    // A run with no journal is the same clear error as open(), and no file is left behind.
    const missing = '01JDX3V9W5Q8K6T2N4M7P1R0ZA';
    await expect(Journal.reopen(tmp.dir, missing)).rejects.toThrow(/no journal at/);
    expect(existsSync(`${tmp.dir}/runs/${missing}.jsonl`)).toBe(false);
  });

  it('a complete last line without its newline is not trusted either', async () => {
    const journal = await journalWith(tmp.dir, []);
    await journal.close();
    const start = readFileSync(journal.path, 'utf8').split('\n')[0]!;
    const read = parseJournal(`${start}\n{"t":"end","at":"x","status":"complete"}`);
    expect(read.state.end).toBeUndefined();
    expect(read.tornBytes).toBeGreaterThan(0);
  });

  it('refuses a journal corrupt in the middle, or one without a start record', async () => {
    const journal = await journalWith(tmp.dir, ['c1']);
    await journal.close();
    const lines = readFileSync(journal.path, 'utf8').split('\n');
    writeFileSync(journal.path, `${lines[0]}\nnot json\n${lines[1]}\n`);
    await expect(readJournal(journal.path)).rejects.toThrow(JournalError);
    expect(() => parseJournal(`${lines[1]}\n`)).toThrow(/start record/);
  });

  it('lets one process at a time use a run; a lock left by a dead process is taken over', async () => {
    const journal = await journalWith(tmp.dir, ['l1']);
    await expect(Journal.open(tmp.dir, journal.runId)).rejects.toThrow(/in use by process/);
    await journal.close();
    writeFileSync(`${journal.path}.lock`, '999999999');
    const { journal: again } = await Journal.open(tmp.dir, journal.runId);
    expect(readFileSync(`${journal.path}.lock`, 'utf8')).toBe(String(process.pid));
    await again.close();
    expect(existsSync(`${journal.path}.lock`)).toBe(false);
  });

  it('refuses run ids that are not ULIDs (no path tricks)', async () => {
    await expect(Journal.open(tmp.dir, '../../etc/passwd')).rejects.toThrow(/not a run id/);
  });

  it('group-commits concurrent writes: every record lands, in order of append', async () => {
    const keys = Array.from({ length: 200 }, (_, i) => `g${i}`);
    const journal = await journalWith(tmp.dir, keys);
    await Promise.all(keys.map((key, i) => journal.write({ t: 'tx', key, txId: TX(100 + i), validSeconds: 120 })));
    await journal.close();
    const { state } = await readJournal(journal.path);
    for (const [i, key] of keys.entries()) expect(state.signals.get(key)!.txIds[0]!.txId).toBe(TX(100 + i));
  });

  it('finishes a short write before syncing, so a nearly full disk never leaves half a line mid-file', async () => {
    const keys = ['s1', 's2', 's3'];
    const journal = await journalWith(tmp.dir, keys);
    const proto = Object.getPrototypeOf((journal as unknown as { fh: object }).fh) as {
      write: (...args: unknown[]) => Promise<{ bytesWritten: number }>;
    };
    const original = proto.write;
    let shortened = false;
    // The first write(2) takes only half of the data, as the kernel may when the disk is nearly full.
    const spy = vi.spyOn(proto, 'write').mockImplementation(function (this: unknown, ...args: unknown[]) {
      if (shortened) return original.apply(this, args);
      shortened = true;
      const data = typeof args[0] === 'string' ? Buffer.from(args[0]) : (args[0] as Buffer);
      const offset = typeof args[1] === 'number' ? args[1] : 0;
      const length = typeof args[2] === 'number' ? args[2] : data.length - offset;
      return original.call(this, data, offset, Math.ceil(length / 2));
    });
    try {
      for (const [i, key] of keys.entries()) journal.append({ t: 'tx', key, txId: TX(300 + i), validSeconds: 120 });
      await journal.flush();
      await journal.write({ t: 'receipt', key: 's1', txId: TX(300), seq: 1 });
    } finally {
      spy.mockRestore();
    }
    await journal.close();
    expect(shortened).toBe(true);
    const { state } = await readJournal(journal.path);
    for (const [i, key] of keys.entries()) expect(state.signals.get(key)!.txIds[0]!.txId).toBe(TX(300 + i));
    expect(state.signals.get('s1')!.receipt?.seq).toBe(1);
  });

  it('keys a signal by eval kind and subject', () => {
    expect(resultKey({ kind: 'math', agent: TEST_AGENT })).toBe(`math|${TEST_AGENT.subject}`);
  });
});

describe('run journal read for a resume (compact, line by line)', () => {
  it('keeps only what is not confirmed, counts the rest, and knows every result as done', async () => {
    const journal = await journalWith(`${tmp.dir}/compact`, [
      'availability|a',
      'math|a',
      'science|a',
      'availability|b',
      'math|b',
    ]);
    journal.append({
      t: 'pack',
      key: 'pack|0',
      encoding: 'json',
      data: '{"p":"hcs-25","n":0}',
      bytes: 20,
      signals: ['math|a', 'availability|a', 'science|a'],
    });
    journal.append({ t: 'tx', key: 'pack|0', txId: TX(1), validSeconds: 120 });
    journal.append({ t: 'receipt', key: 'pack|0', txId: TX(1), seq: 4, duplicate: true });
    // Records about a settled pack after its receipt: ignored, not an error.
    journal.append({ t: 'landed', entries: [{ key: 'pack|0', seq: 4, consensusTimestamp: '1700000001.000000001' }] });
    journal.append({
      t: 'failure',
      key: 'pack|0',
      txId: TX(1),
      code: 'X',
      message: 'late',
      fatal: false,
      consumed: true,
    });
    journal.append({
      t: 'pack',
      key: 'pack|1',
      encoding: 'json',
      data: '{"p":"hcs-25","n":1}',
      bytes: 20,
      signals: ['availability|b'],
    });
    journal.append({ t: 'tx', key: 'pack|1', txId: TX(2), validSeconds: 120 });
    await journal.close();

    const { state } = await readJournal(journal.path, { keep: 'pending' });
    expect(state.keep).toBe('pending');
    expect([...state.signals.keys()].sort()).toEqual(['availability|b', 'math|b']);
    expect([...state.packs.keys()]).toEqual(['pack|1']);
    expect(state.packs.get('pack|1')!.txIds).toHaveLength(1);
    expect(state.packCount).toBe(2);
    expect(state.results).toBe(5);
    for (const key of ['availability|a', 'math|a', 'science|a', 'availability|b', 'math|b'])
      expect(key).toSatisfy((k: string) => hasResult(state, k));
    expect(hasResult(state, 'science|b')).toBe(false);
    expect(state.settled).toMatchObject({
      signals: 3,
      published: 3,
      duplicates: 3,
      messages: { count: 1, bytes: 20, maxBytes: 20 },
    });
    expect(state.settled.list.map((l) => [l.key, l.seq, l.index])).toEqual([
      ['math|a', 4, 0],
      ['availability|a', 4, 1],
      ['science|a', 4, 2],
    ]);

    // The full read (verify) keeps everything, as before.
    const full = await readJournal(journal.path);
    expect(full.state.signals.size).toBe(5);
    expect(full.state.packs.size).toBe(2);
    expect(signalReceipt(full.state, full.state.signals.get('science|a')!)).toMatchObject({
      seq: 4,
      index: 2,
      consensusTimestamp: '1700000001.000000001',
    });

    // Journal.open reads compact.
    const opened = await Journal.open(`${tmp.dir}/compact`, journal.runId);
    expect(opened.state.signals.size).toBe(2);
    await opened.journal.close();
  });

  it('resumes a journal from before packing (one v1 message per signal) the same way', async () => {
    const journal = await journalWith(`${tmp.dir}/compact-v1`, ['k1', 'k2', 'k3']);
    journal.append({ t: 'tx', key: 'k1', txId: TX(1), validSeconds: 120 });
    journal.append({ t: 'receipt', key: 'k1', txId: TX(1), seq: 7 });
    journal.append({ t: 'landed', entries: [{ key: 'k1', seq: 7, consensusTimestamp: '1700000001.000000001' }] });
    journal.append({ t: 'tx', key: 'k2', txId: TX(2), validSeconds: 120 });
    journal.append({
      t: 'failure',
      key: 'k2',
      txId: TX(2),
      code: 'INVALID_SIGNATURE',
      message: 'x',
      fatal: true,
      consumed: true,
    });
    await journal.close();
    const { state } = await readJournal(journal.path, { keep: 'pending' });
    expect([...state.signals.keys()]).toEqual(['k2', 'k3']);
    expect(state.signals.get('k2')!.txIds).toEqual([{ txId: TX(2), validSeconds: 120, consumed: true }]);
    expect(state.settled).toMatchObject({ published: 1, messages: { count: 1 } });
    expect(['k1', 'k2', 'k3'].every((k) => hasResult(state, k))).toBe(true);
  });

  it('reads lines longer than its read buffer, and a torn last line, as the text parser does', async () => {
    const agents = Array.from({ length: 6_000 }, (_, i) => ({
      ...TEST_AGENT,
      subject: `uaid:aid:${'x'.repeat(150)}${i};uid=0;proto=http;nativeId=127.0.0.1`,
      name: `agent ${i}`,
    }));
    const journal = await Journal.create(`${tmp.dir}/long`, {
      run: '01JDX3V9W5Q8K6T2N4M7P1R0ZB',
      seed: 'long',
      runKey: Buffer.alloc(32, 7).toString('base64url'),
      topic: '0.0.1001',
      config: {
        network: 'local',
        evals: ['availability'],
        concurrency: 1,
        budgetMs: 1000,
        maxFeeHbar: 5,
        keepResponses: true,
      },
      agents,
    });
    for (const agent of agents.slice(0, 3000)) {
      const key = `availability|${agent.subject}`;
      journal.append({
        t: 'result',
        key,
        result: {
          kind: 'availability',
          agent,
          reachable: true,
          latencyMs: 1,
          transport: 'http',
          fetchedAt: '2026-01-01T00:00:00.000Z',
        },
        message: { json: messageFor(key), bytes: 10 },
      });
    }
    await journal.close();
    appendFileSync(journal.path, '{"t":"end","at":"x","sta');
    const text = readFileSync(journal.path, 'utf8');
    expect(text.indexOf('\n')).toBeGreaterThan(1 << 20);
    const streamed = await readJournal(journal.path, { keep: 'pending' });
    const parsed = parseJournal(text, 'journal', { keep: 'pending' });
    expect(streamed.state.start.agents).toHaveLength(6_000);
    expect(streamed.state.results).toBe(3_000);
    expect(streamed.state.signals.size).toBe(3_000);
    expect([streamed.records, streamed.validBytes, streamed.tornBytes]).toEqual([
      parsed.records,
      parsed.validBytes,
      parsed.tornBytes,
    ]);
    expect(streamed.tornBytes).toBe(Buffer.byteLength('{"t":"end","at":"x","sta'));
  });
});
