#!/usr/bin/env node
/**
 * cold-start: how long `hcs25 --help` takes beyond starting Node itself. Runs `node bin/hcs25 --help` and
 * `node -e 0` alternately, RUNS times each, and compares their medians (goal: ≤ 100 ms more).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import * as bench from './lib/bench.mjs';

const HELP = `npm run bench -- cold-start [--runs N] [--bin PATH] [--quick]
  --runs  runs of each command (default 21; --quick 5)
  --bin   the CLI to start (default bin/hcs25)`;
const opts = bench.options({ runs: 21, bin: 'bin/hcs25' }, { runs: 5 });
const MAX_OVER_MS = 100;

if (opts.help) console.log(HELP);
else main();

function time(args) {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: bench.ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - t0;
  if (r.status !== 0) {
    const why = r.stderr.toString().trim().split('\n').slice(0, 4).join('\n  ');
    throw new Error(`node ${args.join(' ')} exited ${r.status ?? r.signal}:\n  ${why}`);
  }
  return ms;
}

function main() {
  bench.header('cold-start', `node ${opts.bin} --help vs node -e 0, median of ${opts.runs} runs each`);
  const cli = [join(bench.ROOT, opts.bin), '--help'];
  // One unmeasured run of each: the first start reads the files from disk, later ones from the page cache.
  time(cli);
  time(['-e', '0']);
  const help = [];
  const bare = [];
  for (let k = 0; k < opts.runs; k++) {
    help.push(time(cli));
    bare.push(time(['-e', '0']));
  }
  const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];
  const over = median(help) - median(bare);
  const spread = (list) =>
    `median ${median(list).toFixed(0)} ms (min ${Math.min(...list).toFixed(0)}, max ${Math.max(...list).toFixed(0)})`;
  console.log(`  hcs25 --help: ${spread(help)}; node -e 0: ${spread(bare)}`);
  bench.verdict(
    'cold-start hcs25 --help over node -e 0',
    `+${over.toFixed(0)} ms`,
    `≤ ${MAX_OVER_MS} ms`,
    over <= MAX_OVER_MS,
  );
  bench.finish();
}
