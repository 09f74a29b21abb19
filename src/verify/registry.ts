/**
 * The registries a run cites, read as they were when the run started: for each run, the HCS-2/HCS-10 registries its
 * signals name in `sources`, each read by discovery up to the consensus time of the run's first signal on the topic,
 * and the cited subjects it did not list then. A registry that cannot be read is not checkable, never a mismatch.
 */
import type { Hcs25Client } from '../client.js';
import { consensusIso, consensusNanos } from '../core/consensus-time.js';
import { errorMessage } from '../core/errors.js';
import { discoverAgents } from '../discover/discover-agents.js';
import { RegistryCitations } from '../read/resolve-names.js';
import type { ReadSignal } from '../read/types.js';
import type { RegistryCheck } from './findings.js';

/** Registry reads at most per verify: each reads a whole registry prefix (`--run` narrows a verify to one run). */
export const MAX_REGISTRY_READS = 16;

type Listing = { subjects: ReadonlySet<string>; unresolved: number } | { error: string };

export async function checkRegistries(
  client: Hcs25Client,
  signals: readonly ReadSignal[],
  signal?: AbortSignal,
): Promise<RegistryCheck[]> {
  const runs = new Map<string, { start: string; citations: RegistryCitations }>();
  for (const s of signals) {
    let run = runs.get(s.message.run);
    if (!run) {
      run = { start: s.consensusTimestamp, citations: new RegistryCitations() };
      runs.set(s.message.run, run);
    }
    // Signals come in consensus order, but a caller's list need not: the earliest is the start.
    if ((consensusNanos(s.consensusTimestamp) ?? 0n) < (consensusNanos(run.start) ?? 0n))
      run.start = s.consensusTimestamp;
    run.citations.add(s);
  }
  const listings = new Map<string, Promise<Listing>>();
  const listing = (source: string, until: string): Promise<Listing> => {
    const key = `${source} ${until}`;
    let found = listings.get(key);
    if (!found) {
      found =
        listings.size >= MAX_REGISTRY_READS
          ? Promise.resolve({ error: `not read (at most ${MAX_REGISTRY_READS} registry reads; pass --run)` })
          : discoverAgents(client, { registry: source, until, ...(signal && { signal }) }).then(
              (r) => ({ subjects: new Set(r.agents.map((a) => a.subject)), unresolved: r.skipped.length }),
              (err: unknown) => {
                signal?.throwIfAborted();
                return { error: errorMessage(err) };
              },
            );
      listings.set(key, found);
    }
    return found;
  };

  const out: RegistryCheck[] = [];
  for (const [run, { start, citations }] of runs) {
    for (const [source, subjects] of citations.bySource) {
      const read = await listing(source, start);
      const base = { run, source, asOf: consensusIso(start), cited: subjects.size };
      if ('error' in read) out.push({ ...base, notCheckable: read.error });
      else
        out.push({
          ...base,
          notListed: [...subjects].filter((subject) => !read.subjects.has(subject)),
          ...(read.unresolved > 0 ? { unresolved: read.unresolved } : {}),
        });
    }
  }
  return out;
}
