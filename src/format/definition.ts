/**
 * The definition of format 3 that a topic points to (memo `hcs25-tool/3 hcs://1/<file>`): an HCS-1 file holding the
 * format id, a title, the docs link and the JSON Schema of each op, so a consumer who finds the topic on an explorer
 * reaches the format from the ledger alone. The schemas are the checked-in ones (json-schemas-v3.ts), never a copy.
 */
import { z } from 'zod';
import { Hcs25Error } from '../core/errors.js';
import { FORMAT_THREE_SCHEMA_SOURCES, renderSchemas } from './json-schemas-v3.js';
import { FORMAT_ID_V3 } from './schema-v3.js';

export const FORMAT_THREE_TITLE = 'hcs25 trust-signal messages, format 3';
export const FORMAT_DOCS_URL = 'https://github.com/hcs25/hcs25/blob/main/docs/formats.md';
/** File names in `schemas/` of the format-3 ops: `signals-3.schema.json` → op `signals`. */
const FORMAT_THREE_SCHEMA_SUFFIX = '-3.schema.json';

/** The JSON Schema of each format-3 op, keyed by op name, as `renderJsonSchemas` renders them. */
export function formatThreeSchemas(
  rendered: Record<string, string> = renderSchemas(FORMAT_THREE_SCHEMA_SOURCES),
): Record<string, object> {
  const out: Record<string, object> = {};
  for (const [file, text] of Object.entries(rendered)) {
    if (!file.endsWith(FORMAT_THREE_SCHEMA_SUFFIX)) continue;
    out[file.slice(0, -FORMAT_THREE_SCHEMA_SUFFIX.length)] = JSON.parse(text) as object;
  }
  return out;
}

export const formatDefinitionSchema = z.looseObject({
  format: z.string().min(1).max(64),
  title: z.string().max(200).optional(),
  docs: z.string().max(500).optional(),
  schemas: z.record(z.string().max(64), z.record(z.string(), z.unknown())),
});
export type FormatDefinition = z.infer<typeof formatDefinitionSchema>;

/** The document inscribed by `hcs25 topic create`. */
export function formatDefinition(schemas: Record<string, object> = formatThreeSchemas()): FormatDefinition {
  return {
    format: FORMAT_ID_V3,
    title: FORMAT_THREE_TITLE,
    docs: FORMAT_DOCS_URL,
    schemas: schemas as Record<string, Record<string, unknown>>,
  };
}

/** The bytes of the file: compact JSON (the HCS-1 writer compresses it; every chunk costs a message). */
export function formatDefinitionBytes(definition: FormatDefinition = formatDefinition()): Buffer {
  return Buffer.from(JSON.stringify(definition), 'utf8');
}

/** Parses a definition file's bytes; throws an HCS1_INVALID error naming the file when it is not one. */
export function parseFormatDefinition(bytes: Uint8Array, what: string): FormatDefinition {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new Hcs25Error('HCS1_INVALID', `${what} is not JSON, so it is not a format definition`, {
      hint: 'name the hcs://1/ file that `hcs25 topic create` inscribed',
    });
  }
  const parsed = formatDefinitionSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new Hcs25Error(
      'HCS1_INVALID',
      `${what} is not a format definition (${issue ? `${issue.path.join('.') || '(root)'}: ${issue.message}` : 'schema mismatch'})`,
      { hint: 'name the hcs://1/ file that `hcs25 topic create` inscribed' },
    );
  }
  return parsed.data;
}
