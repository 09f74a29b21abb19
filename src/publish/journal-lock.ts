/**
 * The run journal's lock: one process per run at a time, by a `<journal>.lock` file holding the owner's pid.
 */
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { JournalError } from './journal-records.js';

/** Locks an existing journal: a missing one is a clear error before the lock is taken (and before anything creates it). */
export async function lockExisting(path: string, runId: string): Promise<string> {
  await stat(path).catch((err: NodeJS.ErrnoException) => {
    throw err.code === 'ENOENT'
      ? new JournalError(`no journal at ${path}`, { hint: 'check the run id and --state-dir' })
      : err;
  });
  return acquireLock(path, runId);
}

/**
 * One process per run at a time: two writers would interleave the journal and both resend the same ids. The lock
 * file holds the owner's pid; a lock left by a killed process (pid gone) is taken over.
 */
export function acquireLock(journal: string, runId: string): string {
  const lock = `${journal}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
      return lock;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const owner = Number(readFileSafe(lock));
      if (Number.isInteger(owner) && owner > 0 && isAlive(owner)) {
        throw new JournalError(`run ${runId} is in use by process ${owner}`, {
          hint: 'wait for it to finish, or stop it; a killed run can be resumed',
        });
      }
      try {
        unlinkSync(lock);
      } catch {
        // Another process took it over first; the next attempt finds out.
      }
    }
  }
  throw new JournalError(`cannot lock run ${runId}`, { hint: `remove ${lock} if no hcs25 process is using the run` });
}

export function releaseLock(lock: string): void {
  try {
    if (readFileSafe(lock) === String(process.pid)) unlinkSync(lock);
  } catch {
    // Already gone.
  }
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return '';
  }
}

/** Whether a process with this id runs (one we may not signal counts as running). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
