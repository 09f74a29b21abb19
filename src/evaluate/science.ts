import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { Hcs25Error } from '../core/errors.js';
import type { Letter, ScienceQuestion } from './types.js';
import type { Rng } from './rng.js';

export const SCIENCE_CATEGORIES = ['chemistry', 'biology', 'physics', 'earth-science'] as const;
export const SCIENCE_INSTRUCTION = 'Answer with just A, B, C, or D.';
const LETTERS: readonly Letter[] = ['A', 'B', 'C', 'D'];

const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const optionText = z.string().trim().min(1).max(160);

/**
 * One bank question, canonical option order. A private bank (`--science-bank FILE`) uses the same schema.
 * Categories are slugs so a private bank may add its own; the id must repeat the category.
 */
export const scienceQuestionSchema = z
  .object({
    id: z
      .string()
      .max(120)
      .regex(/^sci:[a-z0-9]+(?:-[a-z0-9]+)*:[a-z0-9]+(?:-[a-z0-9]+)*$/, 'id must look like sci:<category>:<slug>'),
    category: z.string().regex(SLUG, 'category must be a lowercase slug such as earth-science'),
    stem: z.string().trim().min(1).max(600),
    options: z.tuple([optionText, optionText, optionText, optionText]),
    answer: z.enum(['A', 'B', 'C', 'D']).describe('letter of the correct option in the order stored here'),
  })
  .strict()
  .describe('one SimpleScience question: a stem, exactly four distinct options, one correct letter')
  .superRefine((q, ctx) => {
    if (!q.id.startsWith(`sci:${q.category}:`)) {
      ctx.addIssue({ code: 'custom', path: ['id'], message: `id must start with sci:${q.category}:` });
    }
    const seen = new Set<string>();
    q.options.forEach((option, i) => {
      const key = option.toLowerCase().replace(/\s+/g, ' ');
      if (seen.has(key))
        ctx.addIssue({ code: 'custom', path: ['options', i], message: `option "${option}" is repeated` });
      seen.add(key);
    });
  });

export const scienceBankSchema = z
  .object({
    $schema: z.string().optional(),
    version: z.literal(1),
    questions: z.array(scienceQuestionSchema).min(1),
  })
  .strict()
  .describe(
    'an hcs25 SimpleScience question bank (the bundled data/science-bank.json, or a private --science-bank file)',
  )
  .superRefine((bank, ctx) => {
    const seen = new Set<string>();
    bank.questions.forEach((q, i) => {
      if (seen.has(q.id))
        ctx.addIssue({ code: 'custom', path: ['questions', i, 'id'], message: `id ${q.id} is repeated` });
      seen.add(q.id);
    });
  });

export type ScienceBankEntry = z.infer<typeof scienceQuestionSchema>;
export type ScienceBank = z.infer<typeof scienceBankSchema>;

export class ScienceBankError extends Hcs25Error {
  readonly file: string;
  readonly questionId: string | undefined;
  constructor(file: string, message: string, options: { questionId?: string; hint?: string; cause?: unknown } = {}) {
    super('SCIENCE_BANK', `science bank ${file}: ${message}`, {
      hint: options.hint ?? 'fix the file so it matches schemas/science-bank.schema.json, or leave out --science-bank',
      cause: options.cause,
    });
    this.name = 'ScienceBankError';
    this.file = file;
    this.questionId = options.questionId;
  }
}

export const DEFAULT_SCIENCE_BANK_FILE = fileURLToPath(new URL('../../data/science-bank.json', import.meta.url));

/** Names the question an issue is about: its id when it has a readable one, else its position. */
function describeIssue(raw: unknown, issue: z.core.$ZodIssue): { where: string; questionId?: string } {
  const [head, index, ...rest] = issue.path;
  if (head !== 'questions' || typeof index !== 'number') return { where: issue.path.join('.') || 'the file' };
  const entry = (raw as { questions?: unknown[] }).questions?.[index] as { id?: unknown } | undefined;
  const questionId = typeof entry?.id === 'string' ? entry.id : undefined;
  const field = rest.length > 0 ? ` field ${rest.join('.')}` : '';
  return { where: `question #${index + 1}${questionId ? ` (${questionId})` : ''}${field}`, questionId };
}

/** Validates a parsed bank; `source` names it in errors. */
export function parseScienceBank(raw: unknown, source: string): ScienceBankEntry[] {
  const parsed = scienceBankSchema.safeParse(raw);
  if (parsed.success) return parsed.data.questions;
  const issue = parsed.error.issues[0] as z.core.$ZodIssue;
  const { where, questionId } = describeIssue(raw, issue);
  const more = parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more problems)` : '';
  throw new ScienceBankError(
    source,
    `${where}: ${issue.message}${more}`,
    questionId === undefined ? {} : { questionId },
  );
}

let defaultBank: ScienceBankEntry[] | undefined;

/** Loads and validates a bank file (default: the bundled `data/science-bank.json`, read once and cached). */
export function loadScienceBank(file?: string): ScienceBankEntry[] {
  if (file === undefined && defaultBank) return defaultBank;
  const path = file ?? DEFAULT_SCIENCE_BANK_FILE;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'read error';
    throw new ScienceBankError(path, `cannot be read (${code})`, {
      hint: 'check the path given to --science-bank',
      cause: err,
    });
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    throw new ScienceBankError(path, `is not valid JSON (${(err as Error).message})`, { cause: err });
  }
  const bank = parseScienceBank(raw, path);
  if (file === undefined) defaultBank = bank;
  return bank;
}

export function sciencePrompt(stem: string, options: readonly string[]): string {
  const lines = options.map((option, i) => `${LETTERS[i]}) ${option}`);
  return `${SCIENCE_INSTRUCTION}\n\n${stem}\n${lines.join('\n')}`;
}

/** The question with its options in `order` (indices into the canonical options); identity = canonical order. */
export function scienceQuestionFromEntry(
  entry: ScienceBankEntry,
  order: readonly number[] = [0, 1, 2, 3],
): ScienceQuestion {
  const options = order.map((i) => entry.options[i] as string) as [string, string, string, string];
  const correct = order.indexOf(LETTERS.indexOf(entry.answer));
  return {
    kind: 'science',
    id: entry.id,
    category: entry.category,
    stem: entry.stem,
    options,
    answer: LETTERS[correct] as Letter,
    prompt: sciencePrompt(entry.stem, options),
  };
}

/** A question drawn uniformly from the bank, its options shuffled for this run (question first, then order). */
export function pickScienceQuestion(bank: readonly ScienceBankEntry[], rng: Rng): ScienceQuestion {
  const entry = rng.pick(bank);
  return scienceQuestionFromEntry(entry, rng.shuffle([0, 1, 2, 3]));
}
