/**
 * From descriptions to evaluable agents: fill in what a description leaves to the chain (an HCS-10 agent's
 * profile and inbound topic, a profile's account), check that an inbound topic belongs to the account that claims
 * it, give every agent its subject UAID, and drop agents listed twice. Shared by registry discovery and `--agents`.
 */
import type { LedgerName } from '../config/networks.js';
import { errorMessage } from '../core/errors.js';
import { isMirrorOutage } from '../hedera/mirror-rest.js';
import type { Agent } from '../core/agent.js';
import { UNPRINTABLE } from './agent-record.js';
import { describeDocument, fromProfile, type AgentDescription, type Described } from './describe.js';
import { inboundTopicOwner, resolveAccountProfile } from './hcs11.js';
import type { Metadata } from './hcs2.js';
import { ResolveError, resolveDocument, type ResolveContext } from './resolve.js';
import type { SkipList } from './skips.js';
import { buildUaid } from './uaid.js';

/** Where an agent came from: what to call it in a skip reason, and what to record on the Agent. */
export interface Origin {
  ref: string;
  source?: string;
  registrySeq?: number;
}

export interface AgentBuilderOptions {
  network: LedgerName;
  /** A profile with both an endpoint hint and an inbound topic is reached over the endpoint (default) or HCS-10. */
  preferEndpointHints?: boolean;
}

export class AgentBuilder {
  constructor(
    private readonly ctx: ResolveContext,
    private readonly skips: SkipList,
    private readonly options: AgentBuilderOptions,
  ) {}

  /** An HCS-2 entry's metadata (or the HCS-1 file its `t_id` names) → an agent, or a skip. */
  async fromMetadata(metadata: Metadata, origin: Origin): Promise<Agent | null> {
    const described = await this.guard(origin, async () => {
      const { doc } = await resolveDocument(metadata, this.ctx);
      return describeDocument(doc);
    });
    return described ? this.complete(described, origin) : null;
  }

  /** An HCS-10 registration → its account's HCS-11 profile → an agent, or a skip. */
  async fromAccount(
    entry: { accountId: string; inboundTopicId?: string; metadata?: Metadata },
    origin: Origin,
  ): Promise<Agent | null> {
    const described = await this.guard(origin, async (): Promise<Described> => {
      const profile = await resolveAccountProfile(entry.accountId, this.ctx);
      if (profile === null) return registrationOnly(entry);
      const d = fromProfile(profile.doc, entry.accountId);
      if (d.ok && d.description.inboundTopicId === undefined && entry.inboundTopicId !== undefined) {
        d.description.inboundTopicId = entry.inboundTopicId;
      }
      return d;
    });
    return described ? this.complete(described, origin) : null;
  }

  /** A description (already validated) → an agent with its UAID, or a skip. */
  async complete(described: Described, origin: Origin): Promise<Agent | null> {
    if (!described.ok) return this.skip(origin, described.reason);
    const d: AgentDescription = { ...described.description };
    const filled = await this.guard(origin, async () => this.fill(d));
    if (filled !== true) return filled === null ? null : this.skip(origin, filled);
    if (this.options.preferEndpointHints === false && d.inboundTopicId && d.accountId) {
      d.protocol = 'hcs-10';
    }
    let subject: string;
    try {
      subject = await subjectOf(d, this.options.network);
    } catch (err) {
      return this.skip(origin, `could not build a UAID: ${errorMessage(err)}`);
    }
    return {
      subject,
      name: printable(d.name),
      protocol: d.protocol,
      ...(d.endpoint !== undefined && d.protocol !== 'hcs-10' && { endpoint: d.endpoint }),
      ...(d.inboundTopicId !== undefined && { inboundTopicId: d.inboundTopicId }),
      ...(d.accountId !== undefined && { accountId: d.accountId }),
      ...(d.model !== undefined && { model: d.model }),
      ...(origin.source !== undefined && { source: origin.source }),
      ...(origin.registrySeq !== undefined && { registrySeq: origin.registrySeq }),
    };
  }

  /**
   * Completes the HCS-10 side of a description: a profile's account from its inbound topic, a record's inbound topic
   * from its account's profile; then checks the inbound topic's memo names the same account. True, or a reason.
   */
  private async fill(d: AgentDescription): Promise<true | string> {
    const needsHcs10 = d.protocol === 'hcs-10';
    if (d.accountId === undefined && d.inboundTopicId !== undefined) {
      const owner = await inboundTopicOwner(d.inboundTopicId, this.ctx);
      if (owner.accountId !== undefined) d.accountId = owner.accountId;
      else if (needsHcs10)
        return `inbound topic ${d.inboundTopicId} ${owner.exists ? 'does not name its account in its memo' : 'does not exist'}`;
      else delete d.inboundTopicId;
      return true;
    }
    if (d.accountId !== undefined && d.inboundTopicId === undefined && needsHcs10) {
      const profile = await resolveAccountProfile(d.accountId, this.ctx);
      if (profile === null) return `account ${d.accountId} has no HCS-11 profile, so its inbound topic is unknown`;
      const p = fromProfile(profile.doc, d.accountId);
      if (!p.ok) return `profile of ${d.accountId}: ${p.reason}`;
      if (p.description.inboundTopicId === undefined) return `profile of ${d.accountId} has no inboundTopicId`;
      d.inboundTopicId = p.description.inboundTopicId;
    }
    if (d.accountId !== undefined && d.inboundTopicId !== undefined) {
      const owner = await inboundTopicOwner(d.inboundTopicId, this.ctx);
      if (!owner.exists) return `inbound topic ${d.inboundTopicId} does not exist`;
      if (owner.accountId !== undefined && owner.accountId !== d.accountId) {
        return `inbound topic ${d.inboundTopicId} belongs to ${owner.accountId}, not ${d.accountId}`;
      }
    }
    return true;
  }

  /**
   * Runs a resolution step; its failures become this entry's skip. A mirror node that is down is not the entry's
   * fault: that ends discovery with the mirror error instead of failing every remaining entry slowly.
   */
  private async guard<T>(origin: Origin, fn: () => Promise<T>): Promise<T | null> {
    try {
      return await fn();
    } catch (err) {
      if (this.ctx.signal?.aborted || isMirrorOutage(err)) throw err;
      this.skip(origin, err instanceof ResolveError ? err.message : `could not resolve: ${errorMessage(err)}`);
      return null;
    }
  }

  private skip(origin: Origin, reason: string): null {
    this.skips.add(origin.ref, reason);
    return null;
  }
}

function registrationOnly(entry: { accountId: string; inboundTopicId?: string; metadata?: Metadata }): Described {
  if (entry.inboundTopicId === undefined) {
    return {
      ok: false,
      reason: `account ${entry.accountId} has no HCS-11 profile and its registration names no inbound topic`,
    };
  }
  const meta = typeof entry.metadata === 'object' ? entry.metadata : undefined;
  const name =
    typeof meta?.name === 'string' && meta.name.trim() !== ''
      ? meta.name.trim().slice(0, 128)
      : `agent ${entry.accountId}`;
  return {
    ok: true,
    description: {
      kind: 'hcs-10-register',
      name,
      protocol: 'hcs-10',
      accountId: entry.accountId,
      inboundTopicId: entry.inboundTopicId,
    },
  };
}

/**
 * Keeps the first of agents listed twice — same subject, same protocol and endpoint, or same HCS-10 account — and
 * reports the rest. Agents must be in listing order.
 */
export function dedupeAgents(agents: { agent: Agent; ref: string }[], skips: SkipList): Agent[] {
  const seen = new Map<string, string>();
  const out: Agent[] = [];
  for (const { agent, ref } of agents) {
    const keys = [`subject:${agent.subject}`];
    if (agent.endpoint !== undefined) keys.push(`endpoint:${agent.protocol}:${normaliseUrl(agent.endpoint)}`);
    if (agent.accountId !== undefined) keys.push(`account:${agent.accountId}`);
    const dup = keys.map((k) => seen.get(k)).find((v) => v !== undefined);
    if (dup !== undefined) {
      skips.add(ref, `duplicate of ${dup} (${agent.name})`);
      continue;
    }
    for (const k of keys) seen.set(k, ref);
    out.push(agent);
  }
  return out;
}

function normaliseUrl(url: string): string {
  try {
    const u = new URL(url);
    u.hash = '';
    return u.toString().replace(/\/+$/, '');
  } catch {
    return url;
  }
}

/** A described agent's subject: the UAID it declares, else the one HCS-14 derives from it (discover/uaid.ts). */
export async function subjectOf(d: AgentDescription, network: LedgerName): Promise<string> {
  if (d.uaid !== undefined) return d.uaid;
  return buildUaid({
    name: d.name,
    protocol: d.protocol,
    network,
    ...(d.endpoint !== undefined && { endpoint: d.endpoint }),
    ...(d.accountId !== undefined && { accountId: d.accountId }),
    ...(d.inboundTopicId !== undefined && { inboundTopicId: d.inboundTopicId }),
    ...(d.version !== undefined && { version: d.version }),
    ...(d.skills !== undefined && { skills: d.skills }),
  });
}

const UNPRINTABLE_ALL = new RegExp(UNPRINTABLE.source, 'g');

/** Names come from untrusted documents and end up on terminals: no control characters. */
function printable(name: string): string {
  return name.replace(UNPRINTABLE_ALL, ' ').trim() || 'unnamed';
}

/** Runs `fn` over `items` with at most `limit` in flight; results keep the input order. The first failure stops it. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        results[i] = await fn(items[i]!, i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, limit), items.length) }, worker));
  return results;
}
