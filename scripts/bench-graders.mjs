#!/usr/bin/env node
// Grader throughput: 100,000 gradings per grader over a mixed corpus of realistic responses
// (bare answers, markdown/LaTeX wrappers, chain of thought, refusals, ambiguous letters). Run after build.
import os from 'node:os';
import { createRng, gradeChoice, gradeMath, loadScienceBank, pickScienceQuestion, prepareChoiceQuestion } from '../dist/evals/index.js';

const N = 100_000;
// 300,000, not 50,000 as before: after 50,000 gradings TurboFan was still compiling the graders during the first row
// (its CPU counted there: 0.70 against 0.43 µs per reply once compiled). The measured 100,000 are the same.
const WARM_UP = 300_000;
const MATH = [
  '95', '  95\n', '95.', '95.0', 'The answer is **95**.', '$\\boxed{95}$', 'Answer: 95', '37 + 58 = 95',
  '95 is the sum of 37 and 58', '7+8=15, carry 1, 3+5+1=9, so 95', 'Answer: 95 (37+58)', '−95', '1,095', '９５',
  'ninety-five', '95%', '95 apples', '(95)', 'I think 95, maybe 96', '9 5', '1e2', "I can't help with that.", '',
  'Let me work this out step by step. First 30 + 50 = 80, then 7 + 8 = 15, and 80 + 15 = 95. #### 95',
];
const SCIENCE = [
  'B', 'b', '(B)', 'B)', '**B**', '$B$', 'Answer: B', '**Answer:** B', 'The answer is B. Carbon dioxide',
  'B) Carbon dioxide', 'B) Oxygen', 'Carbon dioxide', 'A or B', 'A plant absorbs CO2, so B.', 'It is a gas: B',
  'Answer: B … Answer: C', "I don't know", 'Ｂ', 'E', 'Option B', 'B\n\nUnlike A) Oxygen, it is absorbed', '',
  'Plants take in carbon dioxide from the air and release oxygen, so the correct choice here is B.',
];
const Q = { options: ['Oxygen', 'Carbon dioxide', 'Nitrogen', 'Helium'], answer: 'B' };

function time(label, fn) {
  // Warm-up long enough that the JIT has compiled the graders before the clock starts (its threads count in cpuUsage).
  for (let i = 0; i < WARM_UP; i++) fn(i);
  const cpu = process.cpuUsage();
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i++) fn(i);
  const ns = Number(process.hrtime.bigint() - start);
  const { user, system } = process.cpuUsage(cpu);
  const ms = ns / 1e6;
  // CPU time too: on a shared machine the wall time includes waiting for a core.
  const cpuNs = ((user + system) * 1000) / N;
  // Replies/s by CPU time too: what one core would do, whatever else the machine runs.
  console.log(
    `${label.padEnd(58)} ${ms.toFixed(1).padStart(7)} ms / ${N.toLocaleString('en-US')}  ` +
      `${(ns / N).toFixed(0).padStart(5)} ns each  ${Math.round(N / (ns / 1e9)).toLocaleString('en-US').padStart(11)}/s  ` +
      `(CPU ${(cpuNs / 1000).toFixed(3)} µs each, ${Math.round(1e9 / cpuNs).toLocaleString('en-US')}/s of CPU; load ${os.loadavg()[0].toFixed(1)})`,
  );
}

console.log(
  `bench-graders: grading 100,000 responses per row after ${WARM_UP.toLocaleString('en-US')} warm-up gradings (goal ≥ 2,000,000/s for both evals); load ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`,
);
for (const grader of ['first-token@1', 'last-answer@1']) {
  const opts = { grader, operands: [37, 58] };
  time(`gradeMath   ${grader}, ${MATH.length} response shapes`, (i) => gradeMath(MATH[i % MATH.length], 95, opts));
  // One question, many replies: its options prepared once (prepareChoiceQuestion), as for a question asked of many agents.
  const gradeQ = prepareChoiceQuestion(Q);
  time(`gradeChoice ${grader}, ${SCIENCE.length} response shapes`, (i) => gradeQ(SCIENCE[i % SCIENCE.length], { grader }));
  time(`mixed 50/50 ${grader}`, (i) => (i % 2 === 0 ? gradeMath(MATH[(i >> 1) % MATH.length], 95, opts) : gradeQ(SCIENCE[(i >> 1) % SCIENCE.length], { grader })));
}
// A fresh question object per grading (gradeChoice prepares its options on the spot, or finds them by their texts):
// what a run does, where each question object is graded once. The objects (30,000 copies, cycled) and the replies are
// made before the clock starts; until session 8 they were made inside it, ~140 ns per grading of the bench's own work.
const bank = loadScienceBank();
const rng = createRng('bench');
const fresh = Array.from({ length: 1000 }, () => pickScienceQuestion(bank, rng));
const COPIES = 30_000;
const copies = Array.from({ length: COPIES }, (_, i) => {
  const q = fresh[i % fresh.length];
  return { ...q, options: [...q.options] };
});
const replies = Array.from({ length: COPIES }, (_, i) => {
  const q = fresh[i % fresh.length];
  return i % 3 === 0 ? q.answer : i % 3 === 1 ? q.options[0] : `The answer is ${q.answer}.`;
});
time('gradeChoice first-token@1, 1000 distinct bank questions', (i) => gradeChoice(replies[i % COPIES], copies[i % COPIES]));
