/**
 * Names: display names for the subjects of some signals, from a names file (local knowledge first) and from the
 * registries the signals cite in `sources`, each discovered once. Names are display-only (consumer/names.ts); a
 * registry that cannot be read costs its names, never the scores.
 */
import type { Hcs25Client } from '../client.js';
import { errorMessage } from '../core/errors.js';
import { parseHrl } from '../core/hrl.js';
import { displayName } from '../consumer/display.js';
import type { NamesFile } from '../consumer/names.js';
import type { ReadSignal } from '../consumer/types.js';
import { discoverAgents } from './discover-agents.js';

/** Registries discovered at most: sources are whatever a publisher wrote, and each lookup reads a whole topic. */
export const MAX_NAME_REGISTRIES = 8;

export interface ResolveNamesParameters {
  signals: Iterable<ReadSignal>;
  /** A parsed `--names` file; its names win over registry names. */
  file?: NamesFile;
  /** Look up the registries the signals cite (default true). */
  registries?: boolean;
  signal?: AbortSignal;
}

export interface ResolveNamesReturnType {
  /** Display names by subject (escaped, capped), for ScoreOptions.labels. */
  labels: Record<string, string>;
  /** Registry HRLs that were read. */
  registries: string[];
  /** Registries that could not be read or were not tried (over MAX_NAME_REGISTRIES), with why. */
  failed: Array<{ source: string; reason: string }>;
}

export async function resolveNames(client: Hcs25Client, parameters: ResolveNamesParameters): Promise<ResolveNamesReturnType> {
  const labels: Record<string, string> = { ...parameters.file?.bySubject };
  const out: ResolveNamesReturnType = { labels, registries: [], failed: [] };
  if (parameters.file && parameters.file.records.length > 0) await nameRecords(client, parameters.file.records, labels);

  // Registries cited by subjects that still have no name, in the order signals first cite them.
  const cited = new Map<string, Set<string>>();
  for (const s of parameters.signals) {
    if (Object.hasOwn(labels, s.message.subject)) continue;
    for (const source of s.message.sources ?? []) {
      const hrl = parseHrl(source);
      if (!hrl || (hrl.standard !== 2 && hrl.standard !== 10)) continue;
      const key = `hcs://2/${hrl.topicId}`;
      let subjects = cited.get(key);
      if (!subjects) cited.set(key, (subjects = new Set()));
      subjects.add(s.message.subject);
    }
  }
  if (parameters.registries === false) return out;

  let tried = 0;
  for (const [source, subjects] of cited) {
    if ([...subjects].every((subject) => Object.hasOwn(labels, subject))) continue;
    if (tried++ >= MAX_NAME_REGISTRIES) {
      out.failed.push({ source, reason: `not looked up (at most ${MAX_NAME_REGISTRIES} registries)` });
      continue;
    }
    try {
      const found = await discoverAgents(client, { registry: source, ...(parameters.signal && { signal: parameters.signal }) });
      out.registries.push(source);
      for (const agent of found.agents) {
        if (!subjects.has(agent.subject) || Object.hasOwn(labels, agent.subject)) continue;
        const shown = displayName(agent.name);
        if (shown !== undefined) labels[agent.subject] = shown;
      }
    } catch (err) {
      parameters.signal?.throwIfAborted();
      out.failed.push({ source, reason: errorMessage(err) });
    }
  }
  return out;
}

/** Agent records without a UAID get the subject `run --agents` gives them; those that need the network are left out. */
async function nameRecords(client: Hcs25Client, records: Record<string, unknown>[], labels: Record<string, string>): Promise<void> {
  const [{ describeDocument }, { subjectOf }] = await Promise.all([import('../registry/describe.js'), import('../registry/agents.js')]);
  for (const doc of records) {
    const described = describeDocument(doc);
    if (!described.ok) continue;
    const d = described.description;
    // An HCS-10 agent's UAID includes its inbound topic, which only its profile can tell.
    if (d.protocol === 'hcs-10' && d.inboundTopicId === undefined) continue;
    const subject = await subjectOf(d, client.config.network.ledger).catch(() => undefined);
    const shown = displayName(d.name);
    if (subject !== undefined && shown !== undefined && !Object.hasOwn(labels, subject)) labels[subject] = shown;
  }
}
