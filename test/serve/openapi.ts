/**
 * Validates real API answers against schemas/serve-openapi.json: the status must be documented for the path, and the
 * body must match the documented schema (closed objects, so an added, renamed or missing field fails).
 */
import { readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

const BASE = 'https://github.com/hcs25/hcs25/schemas/';
const read = (file: string) =>
  JSON.parse(readFileSync(new URL(`../../schemas/${file}`, import.meta.url), 'utf8')) as Record<string, unknown>;

type Doc = {
  paths: Record<string, { get: { responses: Record<string, { $ref?: string; content?: Record<string, unknown> }> } }>;
  components: { responses: Record<string, { content?: Record<string, unknown> }> };
};

export const OPENAPI = read('serve-openapi.json') as unknown as Doc;

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

export function openapiValidator(doc: object = OPENAPI) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(read('signal.schema.json'));
  ajv.addSchema(read('signal-v2.schema.json'));
  ajv.addSchema(read('signal-read.schema.json'));
  const id = `${BASE}serve-openapi.json`;
  ajv.addSchema({ ...doc, $id: id });
  const cache = new Map<string, ValidateFunction>();
  const d = doc as Doc;

  /** Throws (with ajv's errors) unless `body` is what the document says `path` answers with `status`. */
  return function check(path: string, status: number, body: unknown): void {
    const op = d.paths[path]?.get;
    if (!op) throw new Error(`${path} is not in the OpenAPI document`);
    let response = op.responses[String(status)];
    if (!response) throw new Error(`${path} answered ${status}, which the OpenAPI document does not list`);
    let at = `#/${pointer('paths', path, 'get', 'responses', String(status))}`;
    if (response.$ref) {
      at = response.$ref;
      response = d.components.responses[response.$ref.split('/').pop()!]!;
    }
    if (!response.content) {
      if (body !== undefined && body !== '') throw new Error(`${path} ${status} has no documented body`);
      return;
    }
    // Another media type (an SVG, a page): the body is text, checked by its own test.
    if (!('application/json' in response.content)) {
      if (typeof body !== 'string') throw new Error(`${path} ${status} answers text, not JSON`);
      return;
    }
    const schemaAt = `${id}${at}/content/${pointer('application/json')}/schema`;
    let validate = cache.get(schemaAt);
    if (!validate) {
      validate = ajv.compile({ $ref: schemaAt });
      cache.set(schemaAt, validate);
    }
    if (!validate(body))
      throw new Error(`${path} ${status} does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}`);
  };
}
