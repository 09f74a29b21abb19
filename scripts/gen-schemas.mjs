#!/usr/bin/env node
// Writes schemas/*.json from the zod schemas (run `npm run schemas` after changing a schema).
// `--check` only compares, and exits 1 when the checked-in files have drifted.
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { renderJsonSchemas } from '../dist/json-schemas.js';

const dir = new URL('../schemas/', import.meta.url);
const check = process.argv.includes('--check');
mkdirSync(dir, { recursive: true });
let drift = 0;
for (const [file, text] of Object.entries(renderJsonSchemas())) {
  const url = new URL(file, dir);
  const current = existsSync(url) ? readFileSync(url, 'utf8') : '';
  if (current === text) continue;
  drift++;
  if (check) console.error(`schemas/${file} is out of date`);
  else {
    writeFileSync(url, text);
    console.log(`wrote schemas/${file}`);
  }
}
if (check && drift > 0) process.exit(1);
if (!check && drift === 0) console.log('schemas are up to date');
