import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderJsonSchemas } from '../src/json-schemas.js';

const dir = new URL('../schemas/', import.meta.url);

describe('schemas/', () => {
  const rendered = renderJsonSchemas();

  it('holds exactly the generated files', () => {
    // serve-openapi.json is written by hand (an API document, not a zod schema); test/serve checks it.
    const files = readdirSync(dir)
      .filter((f) => f.endsWith('.schema.json'))
      .sort();
    expect(files).toEqual(Object.keys(rendered).sort());
  });

  it.each(Object.keys(rendered))('%s matches the zod schema it is generated from (run `npm run schemas`)', (file) => {
    expect(readFileSync(new URL(file, dir), 'utf8')).toBe(rendered[file]);
  });
});
