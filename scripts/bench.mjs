#!/usr/bin/env node
// Runs every benchmark (scripts/bench-*.mjs) one after another, each in its own process so one's heap,
// servers and timers cannot skew the next. `npm run bench` builds first. `npm run bench -- graders` runs one.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
const benches = readdirSync(dir)
  .filter((f) => /^bench-.+\.mjs$/.test(f))
  .filter((f) => only.length === 0 || only.some((name) => f === `bench-${name}.mjs`))
  .sort();
if (benches.length === 0) {
  console.error(`no benchmark matches ${only.join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const file of benches) {
  console.log(`\n=== ${file.replace(/^bench-|\.mjs$/g, '')} ===`);
  const r = spawnSync(process.execPath, [`${dir}${file}`], { stdio: 'inherit' });
  if (r.status !== 0) {
    failed++;
    console.log(`(${file} exited ${r.status ?? r.signal})`);
  }
}
process.exit(failed === 0 ? 0 : 1);
