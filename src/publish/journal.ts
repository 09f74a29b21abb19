/**
 * The run journal: one append-only JSON-lines file per run, `<stateDir>/runs/<RUN>.jsonl`, mode 0600 in a 0700
 * directory. It is written before anything is submitted and is the only place the run key lives until `reveal`.
 *
 * Durability: records are buffered and written by `flush()`, which fdatasyncs; concurrent flushes coalesce into one
 * write + one sync (group commit), so hundreds of submissions in flight cost a handful of syncs per second.
 * A process killed mid-write leaves at most a torn last line; the reader drops it and `open()` cuts it off before
 * appending, so the file stays valid JSON lines.
 *
 * This module writes; the records are in journal-records.ts, the lock in journal-lock.ts, the run state in
 * journal-state.ts and the reading fold in journal-fold.ts (all re-exported here).
 */
import { closeSync, existsSync, fsyncSync, openSync } from 'node:fs';
import { chmod, link, mkdir, open, readdir, rename, stat, truncate, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { RUN_ID_PATTERN } from '../core/ids.js';
import { readJournal, type ReadJournalOptions } from './journal-fold.js';
import { acquireLock, lockExisting, releaseLock } from './journal-lock.js';
import { JOURNAL_VERSION, JournalError, type JournalInput, type StartRecord } from './journal-records.js';
import type { RunState } from './journal-state.js';

export * from './journal-records.js';
export * from './journal-state.js';
export * from './journal-fold.js';
export { isAlive } from './journal-lock.js';

// ---------- paths ----------

export function runsDir(stateDir: string): string {
  return join(stateDir, 'runs');
}

export function journalPath(stateDir: string, runId: string): string {
  assertRunId(runId);
  return join(runsDir(stateDir), `${runId}.jsonl`);
}

export function assertRunId(runId: string): void {
  if (!RUN_ID_PATTERN.test(runId)) {
    throw new JournalError(`"${runId.slice(0, 40)}" is not a run id (a 26-character ULID)`, {
      hint: 'run ids are printed at the start of `hcs25 run`; list them with `ls <state-dir>/runs`',
    });
  }
}

/** Run ids with a journal in `stateDir`, oldest first (ULIDs sort by time). */
export async function listRuns(stateDir: string): Promise<string[]> {
  try {
    const names = await readdir(runsDir(stateDir));
    return names
      .filter((n) => n.endsWith('.jsonl') && RUN_ID_PATTERN.test(n.slice(0, -6)))
      .map((n) => n.slice(0, -6))
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

// ---------- writer ----------

export class Journal {
  private buffer: string[] = [];
  /** The flush that is writing now (or the last one). */
  private current: Promise<void> = Promise.resolve();
  /** A flush queued behind `current`; it takes everything appended before it starts. */
  private next: Promise<void> | null = null;
  private closed = false;
  private failed: unknown = null;

  private constructor(
    readonly path: string,
    readonly runId: string,
    private readonly fh: FileHandle,
    private readonly lock: string,
  ) {}

  /**
   * Starts a new run's journal; the start record is durable when this resolves. The journal gets its name only with
   * its start record on disk (written under a temporary name, synced, then linked): a process killed meanwhile leaves
   * no journal without a start record, which nothing could resume (a restarted watcher stopped on one).
   */
  static async create(stateDir: string, start: Omit<StartRecord, 't' | 'v' | 'at'>): Promise<Journal> {
    // Only the runs folder holds secrets (run keys, raw responses); the state dir may be shared, so leave its mode alone.
    await mkdir(stateDir, { recursive: true });
    await ensurePrivateDir(runsDir(stateDir));
    const path = journalPath(stateDir, start.run);
    const partial = `${path}.new`;
    // Not an append handle: records follow the start record at the file position, as in any other journal.
    const fh = await open(partial, 'w', 0o600);
    try {
      await writeStartRecord(fh, { t: 'start', v: JOURNAL_VERSION, ...start });
      await fh.datasync();
      try {
        await link(partial, path);
      } catch (err) {
        // A filesystem without hard links: a rename, once the name is known to be free (run ids are new ULIDs).
        if ((err as NodeJS.ErrnoException).code === 'EEXIST' || existsSync(path)) {
          throw new JournalError(`a journal for run ${start.run} already exists (${path})`, {
            hint: `resume it with --resume ${start.run}`,
          });
        }
        await rename(partial, path);
      }
    } catch (err) {
      await fh.close().catch(() => undefined);
      throw err;
    } finally {
      await unlink(partial).catch(() => undefined);
    }
    syncDir(runsDir(stateDir));
    return new Journal(path, start.run, fh, acquireLock(path, start.run));
  }

  /**
   * Opens an existing run for appending (resume, reveal). A torn last line — the process died mid-write — is cut
   * off first; anything else that does not parse is an error, because guessing could lose or duplicate a signal.
   */
  static async open(
    stateDir: string,
    runId: string,
    options: Pick<ReadJournalOptions, 'onResult'> = {},
  ): Promise<{ journal: Journal; state: RunState }> {
    const path = journalPath(stateDir, runId);
    const lock = await lockExisting(path, runId);
    try {
      // Compact: a resume needs what is not yet confirmed, and counts of the rest.
      const read = await readJournal(path, { ...options, keep: 'pending' });
      if (read.tornBytes > 0) await truncate(path, read.validBytes);
      await chmod(path, 0o600);
      const fh = await open(path, 'a', 0o600);
      return { journal: new Journal(path, runId, fh, lock), state: read.state };
    } catch (err) {
      releaseLock(lock);
      throw err;
    }
  }

  /**
   * Opens a run for appending without reading it again, for the process that has just written and closed it and
   * still holds its state (a watcher revealing the run it published would otherwise parse every record again).
   * Undefined when the file does not end with a whole line (a
   * failed last write): `open` reads it and cuts the torn line.
   */
  static async reopen(stateDir: string, runId: string): Promise<Journal | undefined> {
    const path = journalPath(stateDir, runId);
    const lock = await lockExisting(path, runId);
    let fh: FileHandle | undefined;
    try {
      fh = await open(path, 'a+', 0o600);
      const { size } = await fh.stat();
      const last = Buffer.alloc(1);
      if (size > 0 && (await fh.read(last, 0, 1, size - 1)).bytesRead === 1 && last[0] === 10)
        return new Journal(path, runId, fh, lock);
      await fh.close();
    } catch (err) {
      await fh?.close().catch(() => undefined);
      releaseLock(lock);
      throw err;
    }
    releaseLock(lock);
    return undefined;
  }

  /** Buffers a record; it reaches the disk with the next `flush()`. */
  append(record: JournalInput): void {
    if (this.closed) throw new JournalError(`journal ${this.runId} is closed`);
    this.buffer.push(recordLine(record));
  }

  /** Appends and waits until the record is on disk. */
  async write(record: JournalInput): Promise<void> {
    this.append(record);
    await this.flush();
  }

  /** Writes and syncs everything appended so far. Concurrent callers share one write and one sync. */
  flush(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.next) return this.next;
    const next = this.current.then(() => {
      this.next = null;
      return this.writeOut();
    });
    this.next = next;
    this.current = next.catch(() => undefined);
    return next;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
    } finally {
      this.closed = true;
      await this.fh.close();
      releaseLock(this.lock);
    }
  }

  private async writeOut(): Promise<void> {
    if (this.buffer.length === 0) return;
    const data = Buffer.from(this.buffer.join(''), 'utf8');
    this.buffer = [];
    try {
      await writeFully(this.fh, data);
      await this.fh.datasync();
    } catch (err) {
      // After a failed write the file may hold part of a line; nothing more may be appended after it.
      this.failed = new JournalError(
        `cannot write the run journal ${this.path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
        {
          hint: 'check free disk space and permissions of the state directory, then resume the run',
          cause: err,
        },
      );
      throw this.failed;
    }
  }
}

/** A record's journal line, stamped with the time it is written (a record has no `at` of its own). */
function recordLine(record: JournalInput): string {
  return `${JSON.stringify({ ...record, at: new Date().toISOString() })}\n`;
}

/**
 * Agents of a start record serialised per write: a registry's list as one string would be the run's largest object
 * (docs/performance.md, "A start record written a slice at a time").
 */
const START_AGENTS_PER_WRITE = 1_000;

/** A start record's line, as recordLine makes it, with its agents written a slice at a time. */
async function writeStartRecord(fh: FileHandle, record: Omit<StartRecord, 'at'>): Promise<void> {
  const line = recordLine({ ...record, agents: [] });
  // A JSON string cannot hold an unescaped quote, so this is the start record's own (and only) agents key.
  const at = line.indexOf('"agents":[]') + '"agents":['.length;
  await writeFully(fh, Buffer.from(line.slice(0, at), 'utf8'));
  for (let i = 0; i < record.agents.length; i += START_AGENTS_PER_WRITE) {
    const slice = JSON.stringify(record.agents.slice(i, i + START_AGENTS_PER_WRITE)).slice(1, -1);
    await writeFully(fh, Buffer.from(i === 0 ? slice : `,${slice}`, 'utf8'));
  }
  await writeFully(fh, Buffer.from(line.slice(at), 'utf8'));
}

/**
 * One write(2) may take only part of the data (a nearly full disk); the rest must follow, or the next flush would
 * append after a half line and corrupt the middle of the journal.
 */
async function writeFully(fh: FileHandle, data: Buffer): Promise<void> {
  for (let offset = 0; offset < data.length; ) {
    const { bytesWritten } = await fh.write(data, offset, data.length - offset);
    if (bytesWritten <= 0) throw Object.assign(new Error('no progress writing the journal'), { code: 'EIO' });
    offset += bytesWritten;
  }
}

async function ensurePrivateDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await stat(dir);
  if ((info.mode & 0o077) !== 0) await chmod(dir, 0o700);
}

/** Makes a new directory entry durable (the file's own data is synced by `flush`). */
export function syncDir(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // Not every filesystem allows syncing a directory; the entry still reaches disk with the next metadata flush.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
