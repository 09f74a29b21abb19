import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { formatGradeResult, gradeCommand, register } from '../../src/cli/grade.js';
import { UsageError } from '../../src/core/errors.js';
import { loadScienceBank } from '../../src/evaluate/science.js';

describe('gradeCommand', () => {
  it('grades math with --expected, default grader', async () => {
    await expect(gradeCommand({ eval: 'math', expected: '95', response: '95' })).resolves.toEqual({
      outcome: 'correct',
      answer: '95',
      compliant: true,
      grader: 'first-token@1',
    });
    await expect(gradeCommand({ eval: 'math', expected: '-12', response: '−12' })).resolves.toMatchObject({
      outcome: 'correct',
    });
  });

  it('selects last-answer@1 and uses the operands of --question-id', async () => {
    const r = await gradeCommand({
      eval: 'math',
      questionId: 'math:add:37+58',
      response: '37 + 58 = 95',
      grader: 'last-answer@1',
    });
    expect(r).toEqual({
      outcome: 'correct',
      answer: '95',
      compliant: false,
      grader: 'last-answer@1',
      questionId: 'math:add:37+58',
    });
    const first = await gradeCommand({ eval: 'math', questionId: 'math:add:37+58', response: '37 + 58 = 95' });
    expect(first.outcome).toBe('wrong');
  });

  it('grades science by bundled question id and by --options/--answer', async () => {
    const entry = loadScienceBank().find((q) => q.id === 'sci:biology:photosynthesis-gas')!;
    const r = await gradeCommand({ eval: 'science', questionId: entry.id, response: entry.answer });
    expect(r).toEqual({
      outcome: 'correct',
      answer: entry.answer,
      compliant: true,
      grader: 'first-token@1',
      questionId: entry.id,
    });
    const byOptions = await gradeCommand({
      eval: 'science',
      options: 'Oxygen|Carbon dioxide|Nitrogen|Helium',
      answer: 'b',
      response: 'B) Oxygen',
    });
    expect(byOptions).toEqual({
      outcome: 'unparseable',
      answer: null,
      compliant: false,
      reason: 'conflict',
      grader: 'first-token@1',
    });
  });

  it('looks ids up in a private bank with --science-bank', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'hcs25-grade-')), 'bank.json');
    const q = {
      id: 'sci:astronomy:moons-of-mars',
      category: 'astronomy',
      stem: 'How many moons does Mars have?',
      options: ['0', '1', '2', '4'],
      answer: 'C',
    };
    writeFileSync(file, JSON.stringify({ version: 1, questions: [q] }));
    await expect(
      gradeCommand({ eval: 'science', questionId: q.id, scienceBank: file, response: '2' }),
    ).resolves.toMatchObject({
      outcome: 'correct',
      answer: 'C',
    });
  });

  it.each([
    [{ eval: 'math', response: '95' }, /needs --expected/],
    [{ eval: 'math', expected: 'ninety', response: '95' }, /--expected must be a number/],
    [{ eval: 'math', expected: '96', questionId: 'math:add:37+58', response: '95' }, /disagrees/],
    [{ eval: 'math', questionId: 'sci:biology:photosynthesis-gas', response: '95' }, /not a math question id/],
    [{ eval: 'science', response: 'B' }, /needs --question-id/],
    [{ eval: 'science', options: 'a|b|c', answer: 'B', response: 'B' }, /four non-empty texts/],
    [{ eval: 'science', options: 'a|b|c|d', answer: 'E', response: 'B' }, /--answer must be A, B, C or D/],
    [{ eval: 'science', questionId: 'sci:biology:nope', response: 'B' }, /no science question/],
    [{ eval: 'availability', response: 'B' }, /--eval must be math or science/],
    [{ eval: 'math', expected: '95', response: '95', grader: 'best@9' }, /unknown grader/],
  ])('rejects %j with a usage error', async (opts, message) => {
    const err = await gradeCommand(opts).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).message).toMatch(message);
  });

  it('formats one line for people', () => {
    expect(
      formatGradeResult({
        outcome: 'unparseable',
        answer: null,
        compliant: false,
        reason: 'ambiguous',
        grader: 'first-token@1',
      }),
    ).toBe('unparseable  answer=-  compliant=no  reason=ambiguous  (grader first-token@1)');
  });
});

describe('hcs25 grade (commander wiring)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    process.exitCode = undefined;
  });

  async function run(args: string[]): Promise<string> {
    const program = new Command().option('--json').exitOverride();
    register(program);
    let out = '';
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      out += String(chunk);
      return true;
    });
    await program.parseAsync(['node', 'hcs25', ...args]);
    return out;
  }

  it('prints the GradeResult as JSON with --json, taking a negative --expected', async () => {
    const out = await run([
      'grade',
      '--eval',
      'math',
      '--expected',
      '-12',
      '--response',
      'The answer is -12.',
      '--json',
    ]);
    expect(JSON.parse(out)).toEqual({ outcome: 'correct', answer: '-12', compliant: false, grader: 'first-token@1' });
    expect(process.exitCode).toBe(0);
  });

  it('prints one line without --json and passes --grader through', async () => {
    const out = await run([
      'grade',
      '--eval',
      'math',
      '--expected',
      '95',
      '--response',
      '37 + 58 = 95',
      '--grader',
      'last-answer@1',
    ]);
    expect(out).toBe('correct  answer=95  compliant=no  (grader last-answer@1)\n');
  });

  it('exits 2 with a one-line error on bad flags', async () => {
    let err = '';
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      err += String(chunk);
      return true;
    });
    await run(['grade', '--eval', 'science', '--options', 'a|b', '--answer', 'B', '--response', 'B']);
    expect(process.exitCode).toBe(2);
    expect(err).toMatch(/^hcs25: grading science needs/);
  });
});
