/**
 * The grading choices of a run (grader, private science bank and its SHA-256), journaled when the run begins so that
 * a resume asks and grades exactly as the run began.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve as resolvePath } from 'node:path';
import { z } from 'zod';
import { UsageError } from '../core/errors.js';
import { BUILTIN_SCIENCE_BANK_ID, PRIVATE_SCIENCE_BANK_ID } from '../evaluate/generator.js';
import { DEFAULT_GRADER, GRADER_IDS } from '../evaluate/graders.js';
import { loadScienceBank, type ScienceBankEntry } from '../evaluate/science.js';
import type { GraderId } from '../evaluate/types.js';
import type { RunConfigSummary } from './journal.js';

const gradingSchema = z.object({
  grader: z.enum(GRADER_IDS).optional(),
  scienceBank: z.string().optional(),
  scienceBankSha256: z.string().optional(),
});

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

export interface RunQuestionSource {
  grader: GraderId;
  /** The SimpleScience bank the run drew from, when it asked science questions. */
  bank?: { id: string; entries: ScienceBankEntry[] };
}

/**
 * What a journaled run derived its questions from: its grader and science bank (the bundled one, or the private file
 * it named, refused if the file changed since the run began: its questions decide the published question hashes).
 * A resume asks and grades with it; a reveal publishes its digest.
 */
export function runQuestionSource(config: RunConfigSummary): RunQuestionSource {
  const extra = gradingSchema.parse(config.extra ?? {});
  const grader = extra.grader ?? DEFAULT_GRADER;
  if (!config.evals.includes('science')) return { grader };
  if (!extra.scienceBank) return { grader, bank: { id: BUILTIN_SCIENCE_BANK_ID, entries: loadScienceBank() } };
  if (fileSha256(extra.scienceBank) !== extra.scienceBankSha256) {
    throw new UsageError(`the science bank ${extra.scienceBank} changed since the run began`, {
      hint: 'restore the file the run started with: its questions decide which question hashes were published',
    });
  }
  return { grader, bank: { id: PRIVATE_SCIENCE_BANK_ID, entries: loadScienceBank(extra.scienceBank) } };
}

function fileSha256(path: string): string {
  try {
    return createHash('sha256').update(readFileSync(path)).digest('hex');
  } catch (err) {
    throw new UsageError(`cannot read the science bank ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
  }
}
