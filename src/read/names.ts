/**
 * Display names for subjects. Names are not on-chain and not part of any score: they come from a registry entry or a
 * local file, and whoever wrote those chose them. So a name is shown beside the UAID (never instead of it), with
 * control and bidi characters escaped and its length capped.
 */
import { readFileSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { z } from 'zod';
import { UsageError, errorMessage } from '../core/errors.js';
import { parseJsonOrLines } from '../core/json-lines.js';
import { displayName } from './labels.js';

const MAX_FILE_BYTES = 10 * 1024 * 1024;

const UAID = /^uaid:(aid|did):\S+$/;
const nameMap = z.record(z.string().regex(UAID), z.string().max(512));
const record = z.looseObject({
  name: z.string().max(512),
  uaid: z.string().regex(UAID).optional(),
  subject: z.string().regex(UAID).optional(),
});

export interface NamesFile {
  /** Names by subject, already made displayable. */
  bySubject: Record<string, string>;
  /** Agent records that name no UAID: their subject is derived as `run --agents` would (read/resolve-names.ts). */
  records: Record<string, unknown>[];
}

/**
 * `--names FILE`: a JSON object subject → name, or agent records (a JSON list, `{"agents": [...]}` or JSON lines, as
 * `hcs25 agents` and `discover --json` write them) with `name` and `uaid` or `subject`.
 */
export function parseNamesFile(text: string, name: string): NamesFile {
  const out: NamesFile = { bySubject: {}, records: [] };
  const data = parseJsonOrLines(text, (line, cause) =>
    badFile(name, `line ${line} is not JSON (${errorMessage(cause)})`),
  );
  if (data !== null && typeof data === 'object' && !Array.isArray(data) && !('agents' in data)) {
    const parsed = nameMap.safeParse(data);
    if (!parsed.success) throw badFile(name, 'an object must map subject UAIDs to names');
    for (const [subject, raw] of Object.entries(parsed.data)) add(out, subject, raw);
    return out;
  }
  const list = Array.isArray(data) ? data : (data as { agents?: unknown } | null)?.agents;
  if (!Array.isArray(list)) throw badFile(name, 'expected a JSON object, a list of agent records or JSON lines');
  for (const item of list) {
    const parsed = record.safeParse(item);
    if (!parsed.success) continue;
    const subject = parsed.data.uaid ?? parsed.data.subject;
    if (subject !== undefined) add(out, subject, parsed.data.name);
    else out.records.push(item as Record<string, unknown>);
  }
  return out;
}

export function loadNamesFile(path: string): NamesFile {
  const name = basename(path);
  let text: string;
  try {
    const size = statSync(path).size;
    if (size > MAX_FILE_BYTES) throw new UsageError(`${name} is ${size} bytes; the limit is ${MAX_FILE_BYTES}`);
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read names file ${path}: ${errorMessage(err)}`, { hint: 'check the --names path' });
  }
  return parseNamesFile(text, name);
}

function add(out: NamesFile, subject: string, raw: string): void {
  const shown = displayName(raw);
  if (shown !== undefined) out.bySubject[subject] = shown;
}

function badFile(name: string, why: string): UsageError {
  return new UsageError(`names file ${name}: ${why}`, {
    hint: 'pass {"uaid:aid:…": "name"}, a JSON list of agent records, or JSON lines as `hcs25 agents` prints them',
  });
}
