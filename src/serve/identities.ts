/**
 * Subject identities for the serve indexer: the registries that stored signals cite are read (discoverAgents, through
 * the indexer's own client, as each registry was at the newest citing signal) and what their entries say about the
 * cited subjects is stored (name, protocol, endpoint or HCS-10 account, the entry). Bounded work: a few registries a
 * round, a registry read again for newer citations at most once per `refreshMs`, due subjects saved a page at a time.
 * A registry that cannot be read leaves its subjects' identities as they were (`unavailable` when never resolved) and
 * is retried with backoff; indexing never waits for any of this.
 */
import type { Hcs25Client } from '../client.js';
import type { Agent } from '../core/agent.js';
import { errorMessage } from '../core/errors.js';
import { parseHrl } from '../core/hrl.js';
import { backoffDelay } from '../core/retry.js';
import { discoverAgents } from '../discover/discover-agents.js';
import { messageRef } from '../discover/skips.js';
import { displayName, printable } from '../read/labels.js';
import type { IdentityUpdate, ServeStore } from './store/types.js';

export interface IdentityResolverOptions {
  store: ServeStore;
  signal: AbortSignal;
  note?: (message: string) => void;
  /** Registries read per round at most (default 4). */
  registriesPerRound?: number;
  /** A registry is read again for newer citations of subjects it already named at most this often, ms (default 10 min). */
  refreshMs?: number;
  /** Backoff after a registry could not be read, ms (doubles up to maxRetryMs). */
  minRetryMs?: number;
  maxRetryMs?: number;
  /** Reads a registry as it was at `until`: by default discoverAgents over the indexer's client. */
  discover?: (registry: string, until: string, signal: AbortSignal) => Promise<Agent[]>;
}

export interface IdentityRound {
  /** More registries are due and readable at once. */
  more: boolean;
  /** When a registry due but skipped (backing off, or read recently) may be read, ms since the epoch; null: none. */
  nextAt: number | null;
}

export interface IdentityResolver {
  /** Reads the due registries that may be read now (at most `registriesPerRound`). */
  round(now?: number): Promise<IdentityRound>;
}

/** Registry states kept at most (each registry cited is one). */
const MAX_TRACKED = 1024;
/** Longest endpoint stored: a URL from a registry. */
const MAX_ENDPOINT = 2048;

interface RegistryState {
  readAt: number;
  failures: number;
  retryAt: number;
}

export function identityResolver(client: Hcs25Client, options: IdentityResolverOptions): IdentityResolver {
  const { store, signal } = options;
  const perRound = Math.max(1, options.registriesPerRound ?? 4);
  const refreshMs = options.refreshMs ?? 10 * 60_000;
  const states = new Map<string, RegistryState>();
  const discover =
    options.discover ??
    (async (registry: string, until: string, abort: AbortSignal) =>
      (await discoverAgents(client, { registry, until, signal: abort })).agents);

  /** When the registry may be read next: now or earlier when it may be read at once. */
  function readableAt(registry: string, unresolved: number): number {
    const st = states.get(registry);
    if (!st) return 0;
    if (st.failures > 0) return st.retryAt;
    return unresolved > 0 ? 0 : st.readAt + refreshMs;
  }

  /** Reads the registry and saves what it says of its due subjects; returns when to retry it if it failed. */
  async function read(registry: string, until: string, now: number): Promise<number | null> {
    let agents: Map<string, Agent> | undefined;
    let failure: string | undefined;
    const st = states.get(registry) ?? { readAt: 0, failures: 0, retryAt: 0 };
    states.delete(registry); // re-inserted last: the map's first entries are the least recently read
    try {
      agents = new Map((await discover(registry, until, signal)).map((a) => [a.subject, a]));
      if (st.failures > 0) options.note?.(`registry ${registry}: readable again, naming its subjects`);
      st.failures = 0;
      st.retryAt = 0;
      st.readAt = now;
    } catch (err) {
      signal.throwIfAborted();
      failure = errorMessage(err).split('\n')[0]!;
      const wait = backoffDelay(st.failures++, {
        minMs: options.minRetryMs ?? 5_000,
        maxMs: options.maxRetryMs ?? 10 * 60_000,
      });
      st.retryAt = now + wait;
      options.note?.(
        `registry ${registry}: cannot be read (${failure}); its subjects stay unnamed, retrying in ${(wait / 1000).toFixed(0)} s`,
      );
    }
    states.set(registry, st);
    if (states.size > MAX_TRACKED) states.delete(states.keys().next().value!);

    if (agents === undefined) {
      await store.identitiesUnavailable(registry, failure!);
      return st.retryAt;
    }
    let cursor: string | undefined;
    do {
      const page = await store.dueIdentities(registry, { limit: 1000, ...(cursor !== undefined && { cursor }) });
      const updates = page.items.map((due): IdentityUpdate => {
        const agent = agents.get(due.subject);
        if (!agent) return { ...due, registry, status: 'not-listed' };
        return { ...due, registry, status: 'resolved', entry: entryOf(agent, registry) };
      });
      await store.saveIdentities(updates);
      cursor = page.next ?? undefined;
    } while (cursor !== undefined && !signal.aborted);
    return null;
  }

  return {
    async round(now = Date.now()) {
      const due = await store.identitiesDue({ limit: 64 });
      const eligible: typeof due = [];
      let nextAt: number | null = null;
      for (const d of due) {
        const at = readableAt(d.registry, d.unresolved);
        if (at <= now) eligible.push(d);
        else nextAt = Math.min(nextAt ?? at, at);
      }
      for (const d of eligible.slice(0, perRound)) {
        if (signal.aborted) break;
        const retryAt = await read(d.registry, d.until, now);
        if (retryAt !== null) nextAt = Math.min(nextAt ?? retryAt, retryAt);
      }
      return { more: eligible.length > perRound, nextAt };
    },
  };
}

/** What an agent record says, as stored: the name and endpoint escaped and capped (they are the registry's text). */
function entryOf(agent: Agent, registry: string): NonNullable<IdentityUpdate['entry']> {
  // The entry is on the topic the agent was read from (a migrated registry's new topic).
  const topic = (agent.source !== undefined && parseHrl(agent.source)?.topicId) || registry;
  const sequence = agent.registrySeq ?? 0;
  const endpoint = agent.endpoint === undefined ? null : printable(agent.endpoint).slice(0, MAX_ENDPOINT);
  return {
    name: displayName(agent.name) ?? null,
    protocol: agent.protocol,
    endpoint,
    accountId: agent.accountId ?? null,
    entry: messageRef(topic, sequence),
    sequence,
  };
}
