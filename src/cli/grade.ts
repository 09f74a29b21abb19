import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import type { GradeResult, GraderId, Letter } from '../evaluate/types.js';
import { action, globals, printJson, printLine } from './shared.js';
import { quoteInput } from '../config/secret.js';

export interface GradeCommandOptions {
  eval: string;
  response: string;
  expected?: string;
  questionId?: string;
  options?: string;
  answer?: string;
  scienceBank?: string;
  grader?: string;
}

export interface GradeCommandResult extends GradeResult {
  grader: GraderId;
  questionId?: string;
}

const usage = (message: string, hint: string) => new UsageError(message, { hint });

async function mathQuestion(
  opts: GradeCommandOptions,
): Promise<{ expected: number; operands?: number[]; questionId?: string }> {
  if (opts.questionId !== undefined) {
    const { questionById } = await import('../evaluate/questions.js');
    const q = questionById(opts.questionId);
    if (q?.kind !== 'math') {
      throw usage(
        `"${opts.questionId}" is not a math question id`,
        'use an id like math:add:37+58, math:sub:80-12 or math:mul:7*8',
      );
    }
    if (opts.expected !== undefined && Number(opts.expected) !== q.expected) {
      throw usage(
        `--expected ${opts.expected} disagrees with ${q.id} (= ${q.expected})`,
        'give either --question-id or --expected',
      );
    }
    return { expected: q.expected, operands: [q.a, q.b], questionId: q.id };
  }
  const expected = Number(opts.expected);
  if (opts.expected === undefined || opts.expected.trim() === '' || !Number.isFinite(expected)) {
    throw usage(
      opts.expected === undefined
        ? 'grading math needs --expected N or --question-id ID'
        : `--expected must be a number, got ${quoteInput(opts.expected)}`,
      'e.g. hcs25 grade --eval math --expected 95 --response "95"',
    );
  }
  return { expected };
}

async function scienceQuestion(
  opts: GradeCommandOptions,
): Promise<{ options: [string, string, string, string]; answer: Letter; questionId?: string }> {
  if (opts.questionId !== undefined) {
    const [{ questionById }, { loadScienceBank }] = await Promise.all([
      import('../evaluate/questions.js'),
      import('../evaluate/science.js'),
    ]);
    const q = questionById(opts.questionId, loadScienceBank(opts.scienceBank));
    if (q?.kind !== 'science') {
      throw usage(
        `no science question "${opts.questionId}" in the ${opts.scienceBank ? `bank ${opts.scienceBank}` : 'bundled bank'}`,
        'ids look like sci:biology:photosynthesis-gas; or give --options "a|b|c|d" --answer B',
      );
    }
    return { options: q.options, answer: q.answer, questionId: q.id };
  }
  const options = opts.options?.split('|').map((o) => o.trim());
  if (options?.length !== 4 || options.some((o) => o === '')) {
    throw usage(
      'grading science needs --question-id ID, or --options with four non-empty texts separated by "|" and --answer',
      'e.g. --options "Oxygen|Carbon dioxide|Nitrogen|Helium" --answer B',
    );
  }
  const answer = opts.answer?.trim().toUpperCase();
  if (answer !== 'A' && answer !== 'B' && answer !== 'C' && answer !== 'D') {
    throw usage(
      `--answer must be A, B, C or D, got ${quoteInput(opts.answer ?? '')}`,
      'the letter of the correct option in --options',
    );
  }
  return { options: options as [string, string, string, string], answer };
}

/** The work behind `hcs25 grade`, callable without a process: parses the flags, grades, returns the result. */
export async function gradeCommand(opts: GradeCommandOptions): Promise<GradeCommandResult> {
  const { parseGraderId, DEFAULT_GRADER } = await import('../evaluate/graders.js');
  const grader = opts.grader === undefined ? DEFAULT_GRADER : parseGraderId(opts.grader);
  if (opts.eval === 'math') {
    const { gradeMath } = await import('../evaluate/grade-math.js');
    const q = await mathQuestion(opts);
    const result = gradeMath(opts.response, q.expected, q.operands ? { grader, operands: q.operands } : { grader });
    return { ...result, grader, ...(q.questionId ? { questionId: q.questionId } : {}) };
  }
  if (opts.eval === 'science') {
    const { gradeChoice } = await import('../evaluate/grade-choice.js');
    const q = await scienceQuestion(opts);
    return {
      ...gradeChoice(opts.response, q, { grader }),
      grader,
      ...(q.questionId ? { questionId: q.questionId } : {}),
    };
  }
  throw usage(
    `--eval must be math or science, got ${quoteInput(opts.eval)}`,
    'the availability probe has nothing to grade',
  );
}

/** One line for people: `correct  answer=95  compliant=yes  (grader first-token@1)`. */
export function formatGradeResult(r: GradeCommandResult): string {
  const parts = [r.outcome, `answer=${r.answer ?? '-'}`, `compliant=${r.compliant ? 'yes' : 'no'}`];
  if (r.reason) parts.push(`reason=${r.reason}`);
  return `${parts.join('  ')}  (grader ${r.grader}${r.questionId ? `, ${r.questionId}` : ''})`;
}

export function register(program: Command): void {
  program
    .command('grade')
    .description('grade one response (debugging graders)')
    .requiredOption('--eval <kind>', 'math | science')
    .requiredOption('--response <text>', 'the agent response to grade')
    .option('--expected <n>', 'math: the expected number (or give --question-id)')
    .option('--question-id <id>', 'math:add:37+58, or a science id such as sci:biology:photosynthesis-gas')
    .option('--options <a|b|c|d>', 'science: the four options as asked, separated by "|"')
    .option('--answer <letter>', 'science: the correct letter for --options')
    .option('--science-bank <file>', 'science: look --question-id up in this bank instead of the bundled one')
    .option('--grader <id>', 'first-token@1 (default) | last-answer@1')
    .addHelpText(
      'after',
      '\nExamples:\n  hcs25 grade --eval math --expected 95 --response "37 + 58 = 95" --grader last-answer@1\n  hcs25 grade --eval science --options "Oxygen|Carbon dioxide|Nitrogen|Helium" --answer B --response "(B)" --json',
    )
    .action(
      action(async (opts: GradeCommandOptions, cmd: Command) => {
        const result = await gradeCommand(opts);
        if (globals(cmd).json) printJson(result);
        else printLine(formatGradeResult(result));
      }),
    );
}
