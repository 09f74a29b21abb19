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

type Operation = { responses: Record<string, { $ref?: string; content?: Record<string, unknown> }> };
type Doc = {
  paths: Record<string, Partial<Record<'get' | 'post' | 'delete', Operation>>>;
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

  /**
   * Throws (with ajv's errors) unless `body` is what the document says `path` answers with `status` as `type`
   * (for `application/x-ndjson`, call it with each line), to a `method` request.
   */
  return function check(
    path: string,
    status: number,
    body: unknown,
    type = 'application/json',
    method: 'get' | 'post' | 'delete' = 'get',
  ): void {
    const op = d.paths[path]?.[method];
    if (!op) throw new Error(`${method.toUpperCase()} ${path} is not in the OpenAPI document`);
    let response = op.responses[String(status)];
    if (!response) throw new Error(`${path} answered ${status}, which the OpenAPI document does not list`);
    let at = `#/${pointer('paths', path, method, 'responses', String(status))}`;
    if (response.$ref) {
      at = response.$ref;
      response = d.components.responses[response.$ref.split('/').pop()!]!;
    }
    if (!response.content) {
      if (body !== undefined && body !== '') throw new Error(`${path} ${status} has no documented body`);
      return;
    }
    if (!(type in response.content)) throw new Error(`${path} ${status} has no documented ${type} body`);
    const schemaAt = `${id}${at}/content/${pointer(type)}/schema`;
    let validate = cache.get(schemaAt);
    if (!validate) {
      validate = ajv.compile({ $ref: schemaAt });
      cache.set(schemaAt, validate);
    }
    if (!validate(body))
      throw new Error(`${path} ${status} does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}`);
  };
}

/** Throws unless `value` matches the document's component schema `name` (e.g. a webhook's payload). */
export function componentValidator(doc: object = OPENAPI) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const id = `${BASE}serve-openapi.json`;
  ajv.addSchema({ ...doc, $id: id });
  return function check(name: string, value: unknown): void {
    const validate = ajv.compile({ $ref: `${id}#/components/schemas/${name}` });
    if (!validate(value)) throw new Error(`not a ${name}: ${ajv.errorsText(validate.errors)}`);
  };
}
