/**
 * `--agents FILE`: agents that are on no registry, as a JSON list of agent records (or `{"agents": [...]}`).
 * Each record gets the same treatment as a registry entry: validation, HCS-10 completion, a UAID, deduplication.
 */
import { readFile, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { LedgerName } from '../config/networks.js';
import { UsageError, errorMessage } from '../core/errors.js';
import { parseJsonOrLines } from '../core/json-lines.js';
import type { Agent } from '../core/agent.js';
import { agentRecordSchema, looksLikeAgentRecord } from './agent-record.js';
import { AgentBuilder, dedupeAgents, mapLimit } from './agents.js';
import { describeDocument } from './describe.js';
import { openResolveContext, type ResolveSettings } from './resolve.js';
import { SkipList, zodReason, type SkippedEntry } from './skips.js';

const MAX_FILE_BYTES = 10 * 1024 * 1024;

export interface AgentsFileOptions extends ResolveSettings {
  network: LedgerName;
  concurrency?: number;
}

/**
 * The entries of an agents file, in any of the forms hcs25 itself writes: a JSON list, `{"agents": [...]}` (as
 * `hcs25 discover --json` prints), or JSON lines, one record per line (as `hcs25 agents` prints).
 */
function agentEntries(text: string, name: string): unknown[] {
  const data = parseJsonOrLines(
    text,
    (line, cause) =>
      new UsageError(`${name} is neither JSON nor JSON lines: line ${line}: ${errorMessage(cause)}`, {
        hint: 'the agents file is a JSON list of agent records, or one JSON record per line (JSON allows no trailing comma)',
      }),
  );
  if (Array.isArray(data)) return data;
  const agents = (data as { agents?: unknown } | null)?.agents;
  if (Array.isArray(agents)) return agents;
  // A one-line JSON-lines file: a single record.
  if (typeof data === 'object' && data !== null && looksLikeAgentRecord(data as Record<string, unknown>)) return [data];
  throw new UsageError(`${name} must be a JSON list of agent records, {"agents": [...]}, or JSON lines`, {
    hint: 'e.g. [{"name":"calc-bot","protocol":"a2a","endpoint":"https://calc.example.com"}]',
  });
}

/** The records of an agents file that pass the schema, each with its reference (`file.json#index`). */
export function parseAgentsFile(
  text: string,
  name: string,
): { records: { ref: string; doc: Record<string, unknown> }[]; skipped: SkippedEntry[] } {
  const list = agentEntries(text, name);
  const records: { ref: string; doc: Record<string, unknown> }[] = [];
  const skipped: SkippedEntry[] = [];
  list.forEach((item, i) => {
    const ref = `${name}#${i}`;
    const parsed = agentRecordSchema.safeParse(item);
    if (parsed.success) records.push({ ref, doc: item as Record<string, unknown> });
    else skipped.push({ ref, reason: `invalid agent record: ${zodReason(parsed.error)}` });
  });
  return { records, skipped };
}

export async function loadAgentsFile(
  path: string,
  options: AgentsFileOptions,
): Promise<{ agents: Agent[]; skipped: SkippedEntry[] }> {
  const name = basename(path);
  let text: string;
  try {
    const info = await stat(path);
    if (info.size > MAX_FILE_BYTES)
      throw new UsageError(`${name} is ${info.size} bytes; the limit is ${MAX_FILE_BYTES}`);
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read agents file ${path}: ${errorMessage(err)}`, { hint: 'check the --agents path' });
  }
  const { records, skipped } = parseAgentsFile(text, name);
  const skips = new SkipList();
  for (const s of skipped) skips.add(s.ref, s.reason);
  const { ctx, close } = openResolveContext(options);
  try {
    const builder = new AgentBuilder(ctx, skips, { network: options.network });
    const built = await mapLimit(records, options.concurrency ?? 16, async (r) => {
      const agent = await builder.complete(describeDocument(r.doc), { ref: r.ref });
      return agent === null ? null : { agent, ref: r.ref };
    });
    const agents = dedupeAgents(
      built.filter((b) => b !== null),
      skips,
    );
    return { agents, skipped: skips.list() };
  } finally {
    await close();
  }
}
