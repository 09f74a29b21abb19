/**
 * What `hcs25 watch` keeps between restarts, besides the run journals: the registry cursor (last registry message
 * folded) and the current cycle (its run id; the run's seed and key are in its journal). One small JSON file per
 * (registry, topic), `<stateDir>/watch/<registry>-<topic>.json`, replaced atomically (write, fsync, rename).
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { RUN_ID_PATTERN } from '../core/ids.js';
import { JournalError, syncDir } from '../publish/journal.js';

const watchStateSchema = z.object({
  v: z.literal(1),
  registry: z.string(),
  topic: z.string(),
  /** The last registry message folded: registrations after it are new to this watcher. */
  cursor: z.object({ seq: z.number().int().nonnegative(), consensusTimestamp: z.string() }).nullable(),
  /** Runs closed to new signals whose receipts or reveal may still be missing: finished at the next start. */
  unrevealed: z.array(z.string().regex(RUN_ID_PATTERN)).optional(),
  /**
   * A run whose journal is being created: named here first, so a stop between the journal's creation and the next
   * save leaves no journal nobody knows (the next start removes it: nothing was asked in it yet).
   */
  opening: z.string().regex(RUN_ID_PATTERN).optional(),
  /**
   * Agents updated after they were asked this cycle, by subject: asked again in a run after `run` (or in `run` itself
   * when `inclusive`: it had not asked them). Entries go once the new ask is journaled, and at the cycle's end.
   */
  reask: z.record(z.string(), z.object({ run: z.string().regex(RUN_ID_PATTERN), inclusive: z.boolean() })).optional(),
  /** Runs revealed, and when (ms): their journals are removed once older than `--keep-journals`. */
  revealed: z.array(z.object({ run: z.string().regex(RUN_ID_PATTERN), at: z.number().int().nonnegative() })).optional(),
  /** Messages confirmed on `day` (UTC) by runs already finished: the daily fee cap survives a rotation and a restart. */
  feeDay: z.object({ day: z.string(), confirmed: z.number().int().nonnegative() }).optional(),
  /** Tinybars the HCS-10 asks of `day` (UTC) paid: no journal records them, so the daily fee cap keeps them here. */
  askFees: z.object({ day: z.string(), tinybar: z.string().regex(/^\d+$/) }).optional(),
  /**
   * The cycle in progress: when it began (ms), its period, its current run (null between two runs) and the runs it
   * already published (a cycle of a large registry is several runs).
   */
  cycle: z
    .object({
      run: z.string().regex(RUN_ID_PATTERN).nullable(),
      startedAt: z.number().int().nonnegative(),
      periodMs: z.number().int().positive(),
      previous: z.array(z.string().regex(RUN_ID_PATTERN)).optional(),
    })
    .nullable(),
});

export type WatchState = z.infer<typeof watchStateSchema>;

export function watchStatePath(stateDir: string, registry: string, topic: string): string {
  return join(stateDir, 'watch', `${registry}-${topic}.json`);
}

export async function loadWatchState(path: string, registry: string, topic: string): Promise<WatchState> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { v: 1, registry, topic, cursor: null, cycle: null };
    throw err;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  const parsed = watchStateSchema.safeParse(value);
  if (!parsed.success) {
    throw new JournalError(`the watch state ${path} is not valid`, {
      hint: 'remove it to start over (journaled runs are kept and can be resumed with `hcs25 run --resume`)',
    });
  }
  return parsed.data;
}

export async function saveWatchState(path: string, state: WatchState): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.tmp`;
  await writeFile(tmp, `${JSON.stringify(state)}\n`, { mode: 0o600 });
  // syncDir fsyncs whatever path it opens: the new file's data first, then (below) its directory entry.
  syncDir(tmp);
  await rename(tmp, path);
  syncDir(dirname(path));
}
