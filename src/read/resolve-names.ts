/**
 * Names: display names for the subjects of some signals, from a names file (local knowledge first) and from the
 * registries the signals cite in `sources`, each discovered once. Names are display-only (read/names.ts); a
 * registry that cannot be read costs its names, never the scores.
 */
import type { Hcs25Client } from '../client.js';
import { errorMessage } from '../core/errors.js';
import { parseHrl } from '../core/hrl.js';
import { displayName } from './labels.js';
import type { NamesFile } from './names.js';
import type { ReadSignal } from './types.js';
import { discoverAgents } from '../discover/discover-agents.js';

/** Registries discovered at most: sources are whatever a publisher wrote, and each lookup reads a whole topic. */
export const MAX_NAME_REGISTRIES = 8;

export interface ResolveNamesParameters {
  /** The signals to name the subjects of, or their citations gathered while reading (`RegistryCitations`). */
  signals: Iterable<ReadSignal> | RegistryCitations;
  /** A parsed `--names` file; its names win over registry names. */
  file?: NamesFile;
  /** Look up the registries the signals cite (default true). */
  registries?: boolean;
  /** Name every agent those registries list, not only the cited subjects (a streamed read meets the rest later). */
  everyAgent?: boolean;
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

export async function resolveNames(
  client: Hcs25Client,
  parameters: ResolveNamesParameters,
): Promise<ResolveNamesReturnType> {
  const labels: Record<string, string> = { ...parameters.file?.bySubject };
  const out: ResolveNamesReturnType = { labels, registries: [], failed: [] };
  if (parameters.file && parameters.file.records.length > 0) await nameRecords(client, parameters.file.records, labels);

  const cited =
    parameters.signals instanceof RegistryCitations ? parameters.signals : RegistryCitations.of(parameters.signals);
  if (parameters.registries === false) return out;

  let tried = 0;
  for (const [source, subjects] of cited.bySource) {
    if ([...subjects].every((subject) => Object.hasOwn(labels, subject))) continue;
    if (tried++ >= MAX_NAME_REGISTRIES) {
      out.failed.push({ source, reason: `not looked up (at most ${MAX_NAME_REGISTRIES} registries)` });
      continue;
    }
    try {
      const found = await discoverAgents(client, {
        registry: source,
        ...(parameters.signal && { signal: parameters.signal }),
      });
      out.registries.push(source);
      for (const agent of found.agents) {
        if (!(parameters.everyAgent || subjects.has(agent.subject)) || Object.hasOwn(labels, agent.subject)) continue;
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

/**
 * The registries signals cite in `sources` (HCS-2/HCS-10 HRLs), with the subjects citing each, in the order signals
 * first cite them: gathered one signal at a time, so names can be resolved after a topic was read without keeping
 * its signals. A registry whose subjects all have names by then is not looked up.
 */
export class RegistryCitations {
  readonly bySource = new Map<string, Set<string>>();
  /** A signal's source text → its registry's key (`hcs://2/{topic}`), or null: a topic repeats a handful of sources. */
  private readonly keyOf = new Map<string, string | null>();

  static of(signals: Iterable<ReadSignal>): RegistryCitations {
    const out = new RegistryCitations();
    for (const s of signals) out.add(s);
    return out;
  }

  add(signal: ReadSignal): void {
    this.addMessage(signal.message);
  }

  /** `add` of a signal's message alone, as a compact read hands it over. */
  addMessage(message: Pick<ReadSignal['message'], 'sources' | 'subject'>): void {
    const sources = message.sources;
    if (sources === undefined) return;
    for (const source of sources) {
      let key = this.keyOf.get(source);
      if (key === undefined) {
        const hrl = parseHrl(source);
        key = hrl && (hrl.standard === 2 || hrl.standard === 10) ? `hcs://2/${hrl.topicId}` : null;
        // Bounded: a hostile topic can cite a new source in every signal.
        if (this.keyOf.size < 4096) this.keyOf.set(source, key);
      }
      if (key === null) continue;
      let subjects = this.bySource.get(key);
      if (!subjects) {
        subjects = new Set();
        this.bySource.set(key, subjects);
      }
      subjects.add(message.subject);
    }
  }
}

/** Agent records without a UAID get the subject `run --agents` gives them; those that need the network are left out. */
async function nameRecords(
  client: Hcs25Client,
  records: Record<string, unknown>[],
  labels: Record<string, string>,
): Promise<void> {
  const [{ describeDocument }, { subjectOf }] = await Promise.all([
    import('../discover/describe.js'),
    import('../discover/agents.js'),
  ]);
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
