import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  DEFAULT_SCIENCE_BANK_FILE,
  SCIENCE_CATEGORIES,
  ScienceBankError,
  loadScienceBank,
  scienceBankSchema,
  scienceQuestionSchema,
} from '../../src/evaluate/science.js';
import { normaliseOption } from '../../src/evaluate/normalise.js';
import { gradeChoice } from '../../src/evaluate/grade-choice.js';

const raw = JSON.parse(readFileSync(DEFAULT_SCIENCE_BANK_FILE, 'utf8')) as { questions: unknown[] };
const bank = loadScienceBank();
const dir = mkdtempSync(join(tmpdir(), 'hcs25-bank-'));

/** `word` stands in `text` as whole words (not inside a longer word or number). */
function containsWord(text: string, word: string): boolean {
  for (let at = text.indexOf(word); at !== -1; at = text.indexOf(word, at + 1)) {
    const before = text[at - 1] ?? ' ';
    const after = text[at + word.length] ?? ' ';
    if (!/[a-z0-9]/.test(before) && !/[a-z0-9]/.test(after)) return true;
  }
  return false;
}

function writeBank(name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

describe('the bundled science bank', () => {
  it('validates, every question on its own and the whole file', () => {
    for (const q of raw.questions) expect(scienceQuestionSchema.safeParse(q).error).toBeUndefined();
    expect(scienceBankSchema.safeParse(raw).success).toBe(true);
  });

  it('has unique ids of the form sci:<category>:<slug>', () => {
    expect(new Set(bank.map((q) => q.id)).size).toBe(bank.length);
    for (const q of bank) expect(q.id).toMatch(new RegExp(`^sci:${q.category}:[a-z0-9]+(-[a-z0-9]+)*$`));
  });

  it('has exactly 30 questions in each of the four categories', () => {
    expect(bank.length).toBeGreaterThanOrEqual(120);
    for (const category of SCIENCE_CATEGORIES) expect(bank.filter((q) => q.category === category)).toHaveLength(30);
    expect(new Set(bank.map((q) => q.category))).toEqual(new Set(SCIENCE_CATEGORIES));
  });

  it('balances the stored answer letters: 30 each of A–D', () => {
    const counts = { A: 0, B: 0, C: 0, D: 0 };
    for (const q of bank) counts[q.answer]++;
    expect(counts).toEqual({ A: 30, B: 30, C: 30, D: 30 });
  });

  it('has options a grader can tell apart: distinct, no letter A–D of their own, none inside another', () => {
    for (const q of bank) {
      const texts = q.options.map(normaliseOption);
      expect(new Set(texts).size, q.id).toBe(4);
      for (const option of q.options) expect(option, q.id).not.toMatch(/(?<![A-Za-z0-9_])[A-D](?![A-Za-z0-9_])/);
      for (const [i, a] of texts.entries()) {
        for (const [j, b] of texts.entries()) {
          if (i !== j) expect(containsWord(b, a), `${q.id}: "${a}" in "${b}"`).toBe(false);
        }
      }
    }
  });

  it('grades every question right when the agent answers with the letter or the correct text', () => {
    for (const q of bank) {
      expect(gradeChoice(q.answer, q).outcome, q.id).toBe('correct');
      const text = q.options['ABCD'.indexOf(q.answer)]!;
      expect(gradeChoice(text, q), q.id).toEqual({ outcome: 'correct', answer: q.answer, compliant: false });
      const wrong = q.options.find((_, i) => 'ABCD'[i] !== q.answer)!;
      expect(gradeChoice(wrong, q).outcome, q.id).toBe('wrong');
    }
  });

  it('renders to a JSON Schema (for schemas/science-bank.schema.json)', () => {
    const schema = z.toJSONSchema(scienceBankSchema) as { properties: Record<string, unknown> };
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['version', 'questions']));
  });
});

describe('loadScienceBank with a private file', () => {
  const good = {
    version: 1,
    questions: [
      {
        id: 'sci:astronomy:moons-of-mars',
        category: 'astronomy',
        stem: 'How many moons does Mars have?',
        options: ['2', '0', '1', '4'],
        answer: 'A',
      },
    ],
  };

  it('loads a valid private bank', () => {
    expect(loadScienceBank(writeBank('good.json', good))).toEqual(good.questions);
  });

  it.each([
    ['missing.json', undefined, /cannot be read \(ENOENT\)/],
    ['not-json.json', '{ nope', /is not valid JSON/],
    ['no-version.json', { questions: good.questions }, /version/],
    [
      'three-options.json',
      { version: 1, questions: [{ ...good.questions[0], options: ['2', '0', '1'] }] },
      /question #1 \(sci:astronomy:moons-of-mars\) field options/,
    ],
    [
      'bad-letter.json',
      { version: 1, questions: [good.questions[0], { ...good.questions[0], id: 'sci:astronomy:x', answer: 'E' }] },
      /question #2 \(sci:astronomy:x\) field answer/,
    ],
    [
      'dup-option.json',
      { version: 1, questions: [{ ...good.questions[0], options: ['2', '0', '1', ' 2 '] }] },
      /question #1 \(sci:astronomy:moons-of-mars\) field options\.3: option " 2 "|option "2" is repeated/,
    ],
    [
      'dup-id.json',
      { version: 1, questions: [good.questions[0], good.questions[0]] },
      /question #2 \(sci:astronomy:moons-of-mars\) field id: id sci:astronomy:moons-of-mars is repeated/,
    ],
    [
      'wrong-prefix.json',
      { version: 1, questions: [{ ...good.questions[0], category: 'physics' }] },
      /id must start with sci:physics:/,
    ],
  ])('rejects %s with an error naming the file and the question', (name, content, message) => {
    const file = content === undefined ? join(dir, name) : writeBank(name, content);
    let err: unknown;
    try {
      loadScienceBank(file);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ScienceBankError);
    const e = err as ScienceBankError;
    expect(e.code).toBe('SCIENCE_BANK');
    expect(e.file).toBe(file);
    expect(e.message).toContain(file);
    expect(e.message).toMatch(message);
    expect(e.hint).toBeTruthy();
  });
});
