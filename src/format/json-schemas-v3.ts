/**
 * The JSON Schema of each format-3 op, generated from its zod schema: what `schemas/*-3.schema.json` hold and what
 * `hcs25 topic create` inscribes as the format's definition (definition.ts).
 */
import { z } from 'zod';
import { scoreMessageV3Schema, scoresMessageV3Schema } from './score-v3.js';
import { revealMessageV3Schema, signalsMessageV3Schema, zlibMessageV3Schema } from './schema-v3.js';

/** Each format-3 schema file (`<op>-3.schema.json`), its title and the zod schema it is generated from. */
export const FORMAT_THREE_SCHEMA_SOURCES: Readonly<Record<string, { title: string; schema: z.ZodType }>> = {
  'signals-3.schema.json': {
    title:
      'hcs25 format 3 signals (op "signals"): one signal, one subject or many; also the inflated body of an op "zlib" message',
    schema: signalsMessageV3Schema,
  },
  'zlib-3.schema.json': {
    title: 'hcs25 format 3 compressed message (op "zlib"): base64 of a zlib stream of one format-3 message',
    schema: zlibMessageV3Schema,
  },
  'reveal-3.schema.json': { title: 'hcs25 format 3 reveal (op "reveal")', schema: revealMessageV3Schema },
  'score-3.schema.json': {
    title: 'hcs25 format 3 score record (op "score"), in the reference implementation\'s terms, with its evidence',
    schema: scoreMessageV3Schema,
  },
  'scores-3.schema.json': {
    title: 'hcs25 format 3 score records in one message (op "scores"); also the inflated body of an op "zlib" message',
    schema: scoresMessageV3Schema,
  },
};

const BASE_ID = 'https://github.com/hcs25/hcs25/schemas/';

/** JSON Schema documents by file name, as they are checked in (sorted, `$id` and title first, two-space JSON). */
export function renderSchemas(
  sources: Readonly<Record<string, { title: string; schema: z.ZodType }>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [file, { title, schema }] of Object.entries(sources).sort(([a], [b]) => a.localeCompare(b))) {
    const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' });
    out[file] = `${JSON.stringify({ $id: `${BASE_ID}${file}`, title, ...json }, null, 2)}\n`;
  }
  return out;
}
