import { describe, expect, it } from 'vitest';
import { createRng, randomSeed } from '../../src/evaluate/rng.js';
import { generateMathQuestion, MATH_INSTRUCTIONS, buildMathQuestion } from '../../src/evaluate/math.js';
import { loadScienceBank, pickScienceQuestion } from '../../src/evaluate/science.js';
import { questionById } from '../../src/evaluate/questions.js';
import { gradeQuestion } from '../../src/evaluate/graders.js';

describe('createRng', () => {
  it('is deterministic for a seed and differs across seeds', () => {
    const a = createRng('seed-1');
    const b = createRng('seed-1');
    const c = createRng('seed-2');
    const sa = Array.from({ length: 20 }, () => a.next());
    expect(Array.from({ length: 20 }, () => b.next())).toEqual(sa);
    expect(Array.from({ length: 20 }, () => c.next())).not.toEqual(sa);
    expect(a.seed).toBe('seed-1');
  });

  it('keeps next() in [0, 1) and int() inside its inclusive bounds, reaching both ends', () => {
    const rng = createRng('bounds');
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const x = rng.next();
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
      seen.add(rng.int(3, 7));
    }
    expect([...seen].sort()).toEqual([3, 4, 5, 6, 7]);
    expect(() => rng.int(5, 4)).toThrow(RangeError);
  });

  it('shuffles a copy (a permutation) and picks from the array', () => {
    const rng = createRng('shuffle');
    const input = [1, 2, 3, 4, 5, 6];
    const out = rng.shuffle(input);
    expect(input).toEqual([1, 2, 3, 4, 5, 6]);
    expect([...out].sort()).toEqual(input);
    expect(input).toContain(rng.pick(input));
    expect(() => rng.pick([])).toThrow(RangeError);
  });

  it('makes random seeds as hex strings', () => {
    const s = randomSeed();
    expect(s).toMatch(/^[0-9a-f]{16}$/);
    expect(randomSeed()).not.toBe(s);
  });
});

describe('generateMathQuestion', () => {
  const rng = createRng('math-ranges');
  const qs = Array.from({ length: 3000 }, () => generateMathQuestion(rng));

  it('draws each operation with operands in the seed ranges and a correct expected answer', () => {
    for (const q of qs) {
      if (q.op === 'add') {
        expect([q.a >= 10 && q.a <= 100, q.b >= 10 && q.b <= 100, q.expected === q.a + q.b]).toEqual([
          true,
          true,
          true,
        ]);
      } else if (q.op === 'sub') {
        expect([q.a >= 10 && q.a <= 100, q.b >= 1 && q.b <= 50, q.expected === q.a - q.b]).toEqual([true, true, true]);
      } else {
        expect([q.a >= 2 && q.a <= 12, q.b >= 2 && q.b <= 12, q.expected === q.a * q.b]).toEqual([true, true, true]);
      }
    }
    const counts = { add: 0, sub: 0, mul: 0 };
    for (const q of qs) counts[q.op]++;
    for (const n of Object.values(counts)) expect(n).toBeGreaterThan(850); // ~1000 each when uniform
    expect(qs.some((q) => q.expected < 0)).toBe(true);
  });

  it('uses stable ids and the seed prompt shape, rotating the instruction wording', () => {
    expect(buildMathQuestion('add', 37, 58)).toMatchObject({
      id: 'math:add:37+58',
      expected: 95,
      prompt: 'Answer with just the number.\n\nWhat is 37 + 58?',
    });
    expect(buildMathQuestion('sub', 80, 12).id).toBe('math:sub:80-12');
    expect(buildMathQuestion('mul', 7, 8)).toMatchObject({
      id: 'math:mul:7*8',
      prompt: expect.stringContaining('What is 7 × 8?'),
    });
    const instructions = new Set(qs.map((q) => q.prompt.split('\n\n')[0]));
    expect([...instructions].sort()).toEqual([...MATH_INSTRUCTIONS].sort());
  });
});

describe('seeded runs', () => {
  const bank = loadScienceBank();
  function run(seed: string) {
    const rng = createRng(seed);
    return Array.from({ length: 10 }, () => ({
      math: generateMathQuestion(rng),
      science: pickScienceQuestion(bank, rng),
    }));
  }

  it('asks the same questions with the same option order for the same seed', () => {
    expect(run('replay-me')).toEqual(run('replay-me'));
  });

  it('asks different questions for different seeds', () => {
    const a = run('seed-a');
    const b = run('seed-b');
    expect(a.map((x) => x.math.id)).not.toEqual(b.map((x) => x.math.id));
    expect(a.map((x) => x.science.id + x.science.options.join())).not.toEqual(
      b.map((x) => x.science.id + x.science.options.join()),
    );
  });

  it('shuffles options per run and keeps the answer pointing at the same text', () => {
    const rng = createRng('shuffle-check');
    const letters = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const q = pickScienceQuestion(bank, rng);
      const entry = bank.find((e) => e.id === q.id)!;
      const correct = entry.options['ABCD'.indexOf(entry.answer)];
      expect(q.options['ABCD'.indexOf(q.answer)]).toBe(correct);
      expect([...q.options].sort()).toEqual([...entry.options].sort());
      expect(q.prompt).toBe(
        `Answer with just A, B, C, or D.\n\n${q.stem}\nA) ${q.options[0]}\nB) ${q.options[1]}\nC) ${q.options[2]}\nD) ${q.options[3]}`,
      );
      letters.add(q.answer);
    }
    expect([...letters].sort()).toEqual(['A', 'B', 'C', 'D']);
  });
});

describe('questionById and gradeQuestion', () => {
  it('rebuilds math questions from their ids', () => {
    expect(questionById('math:add:37+58')).toMatchObject({ kind: 'math', op: 'add', a: 37, b: 58, expected: 95 });
    expect(questionById('math:sub:80-12')).toMatchObject({ expected: 68 });
    expect(questionById('math:mul:7*8')).toMatchObject({ expected: 56 });
    expect(questionById('math:add:37-58')).toBeUndefined();
    expect(questionById('math:div:8/2')).toBeUndefined();
    expect(questionById('nope')).toBeUndefined();
  });

  it('looks science ids up in canonical option order', () => {
    const entry = loadScienceBank()[5]!;
    const q = questionById(entry.id);
    expect(q).toMatchObject({ kind: 'science', id: entry.id, options: entry.options, answer: entry.answer });
    expect(questionById('sci:chemistry:no-such-question')).toBeUndefined();
  });

  it('dispatches to the right grader and passes operands to last-answer@1', () => {
    const math = questionById('math:add:37+58')!;
    expect(gradeQuestion(math, '37 + 58 = 95').outcome).toBe('wrong');
    expect(gradeQuestion(math, '37 + 58 = 95', 'last-answer@1').outcome).toBe('correct');
    expect(gradeQuestion(math, '95 is the sum of 37 and 58', 'last-answer@1').outcome).toBe('correct');
    const sci = questionById('sci:biology:photosynthesis-gas')!;
    expect(sci.kind).toBe('science');
    const letter = sci.kind === 'science' ? sci.answer : 'A';
    expect(gradeQuestion(sci, letter)).toEqual({ outcome: 'correct', answer: letter, compliant: true });
    expect(gradeQuestion(sci, 'Carbon dioxide').outcome).toBe('correct');
  });
});
