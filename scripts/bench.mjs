#!/usr/bin/env node
// `npm run bench` (it builds first): the benchmarks of what users feel, each in its own process so one's heap,
// servers and timers cannot skew the next. docs/performance.md holds the current figures.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BENCHES = {
  registry:
    '250,000 agents × 3 evals: discovery → evaluation → packing → submission ' +
    '(≤ 1.10× the ideal schedule, ≤ 512 MB)',
  consumer: '1,000,000 signals over 250,000 subjects read, validated and scored (≤ 1.5× fetch and parse, ≤ 1 GB)',
  serve: '250,000 subjects, 200 connections, PostgreSQL and PGlite (lookup p99 ≤ 20 ms, indexing ≥ 20,000 signals/s)',
  watch: 'a new agent on the topic ≤ 10 s after registering; ≤ 1 KB per known agent; flat over a soak',
  'cold-start': 'hcs25 --help ≤ 100 ms over node -e 0',
};

const HELP = `Usage: npm run bench -- [name ...] [options]

Runs the named benchmarks, or all of them in this order when none is named:
${Object.entries(BENCHES)
  .map(([name, what]) => `  ${name.padEnd(11)} ${what}`)
  .join('\n')}

Each prints its machine, commit and date, then one line per figure: RESULT <what>: <figure> (goal …) PASS|FAIL.
The exit code is 1 when a goal is missed. At full scale on 2 cores a run takes about: registry 15 min (a third of
it writing the registry), consumer 10 min, serve 15 min, watch 10 min (35 with --soak-minutes 30), cold-start 1 min;
most of registry, consumer and serve is filling the emulator with test data, which is not timed.

Options go to the benchmark named (npm run bench -- <name> --help lists its own); all of them take:
  --quick  a small scale that runs in seconds to a minute, to see that a benchmark works (its figures mean little)
  --help   this text
Every option can also be set as BENCH_<NAME> in the environment (BENCH_AGENTS=20000, BENCH_QUICK=1).`;

const args = process.argv.slice(2);
const names = args.filter((a) => a in BENCHES);
const rest = args.filter((a) => !(a in BENCHES));
if (names.length === 0 && rest.some((a) => a === '--help' || a === '-h')) {
  console.log(HELP);
  process.exit(0);
}
const unknown = rest.find(
  (a) => !a.startsWith('-') && !/^[\d.]+$/.test(a) && !rest[rest.indexOf(a) - 1]?.startsWith('--'),
);
if (unknown) {
  console.error(`no benchmark is called ${unknown}; there are ${Object.keys(BENCHES).join(', ')}`);
  process.exit(2);
}
const several = names.length !== 1;
if (several && rest.some((a) => a !== '--quick')) {
  console.error(
    `name one benchmark to give it options (npm run bench -- <name> ${rest.join(' ')}); all of them take --quick`,
  );
  process.exit(2);
}
let failed = 0;
for (const name of names.length > 0 ? names : Object.keys(BENCHES)) {
  const script = fileURLToPath(new URL(`bench-${name}.mjs`, import.meta.url));
  const r = spawnSync(process.execPath, [script, ...rest], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
  if (several) console.log('');
}
process.exit(failed === 0 ? 0 : 1);
