/**
 * The grading choices of a run (grader, private science bank and its SHA-256), journaled when the run begins so that
 * a resume asks and grades exactly as the run began.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../core/errors.js';
import { GRADER_IDS } from '../evals/graders.js';
import { loadScienceBank, type ScienceBankEntry } from '../evals/science.js';
import type { GraderId } from '../evals/types.js';
import type { RunConfigSummary } from './journal.js';

const gradingSchema = z.object({ grader: z.enum(GRADER_IDS).optional(), scienceBank: z.string().optional(), scienceBankSha256: z.string().optional() });

/** The grading choices of a new run, journaled so that a resume grades and asks exactly as the run began. */
export function gradingExtra(options: { grader?: GraderId; scienceBank?: string }): Pick<RunConfigSummary, 'extra'> {
  if (!options.grader && !options.scienceBank) return {};
  const extra: z.infer<typeof gradingSchema> = { ...(options.grader && { grader: options.grader }) };
  if (options.scienceBank) {
    const path = resolvePath(options.scienceBank);
    loadScienceBank(path); // refuse a bad bank before anything is journaled
    Object.assign(extra, { scienceBank: path, scienceBankSha256: fileSha256(path) });
  }
  return { extra };
}

/** Runner options for the journaled grading choices; a science bank that changed since the run began is refused. */
export function gradingOf(config: RunConfigSummary): { grader?: GraderId; scienceBank?: ScienceBankEntry[] } {
  const extra = gradingSchema.parse(config.extra ?? {});
  if (!extra.scienceBank) return extra.grader ? { grader: extra.grader } : {};
  if (fileSha256(extra.scienceBank) !== extra.scienceBankSha256) {
    throw new UsageError(`the science bank ${extra.scienceBank} changed since the run began`, {
      hint: 'restore the file the run started with: its questions decide which question hashes were published',
    });
  }
  return { ...(extra.grader && { grader: extra.grader }), scienceBank: loadScienceBank(extra.scienceBank) };
}

function fileSha256(path: string): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch (err) {
    throw new UsageError(`cannot read the science bank ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}

