/**
 * Discover: a registry topic (HCS-2 or HCS-10) and/or an agents file → the agents to evaluate, each with its subject
 * UAID and how to reach it, plus every skipped entry with its reason.
 */
import type { Hcs25Client } from '../client.js';
import type { Agent } from '../core/agent.js';
import type { RegistryInfo, RegistryKind } from './discover.js';
import type { SkippedEntry } from './skips.js';

export interface DiscoverAgentsParameters {
  /** Registry topic: `0.0.1234` or `hcs://2/0.0.1234`. */
  registry?: string;
  /** A JSON list of agent records; agents already listed by the registry are skipped. */
  agentsFile?: string;
  /** Read a topic whose memo does not say what it is as this kind of registry. */
  kind?: RegistryKind;
  /** Registry messages read at most. */
  maxMessages?: number;
  /** The registry as it was at this consensus time (`seconds.nanos`): later messages are not read. */
  until?: string;
  /** Reach HCS-10 agents at an HTTP endpoint their profile names (default true). */
  preferEndpointHints?: boolean;
  signal?: AbortSignal;
}

export interface DiscoverAgentsReturnType {
  registry?: RegistryInfo;
  agents: Agent[];
  skipped: SkippedEntry[];
}

export async function discoverAgents(
  client: Hcs25Client,
  parameters: DiscoverAgentsParameters,
): Promise<DiscoverAgentsReturnType> {
  const { config } = client;
  const common = {
    mirror: client.mirror,
    network: config.network.ledger,
    allowPrivateEndpoints: config.allowPrivateEndpoints,
    ...(config.ipfsGateway !== undefined && { ipfsGateway: config.ipfsGateway }),
  };
  const out: DiscoverAgentsReturnType = { agents: [], skipped: [] };
  if (parameters.registry) {
    const { discoverRegistry } = await import('./discover.js');
    const result = await discoverRegistry({
      ...common,
      registry: parameters.registry,
      ...(parameters.kind && { kind: parameters.kind }),
      ...(parameters.maxMessages !== undefined && { maxMessages: parameters.maxMessages }),
      ...(parameters.until !== undefined && { until: parameters.until }),
      ...(parameters.preferEndpointHints !== undefined && { preferEndpointHints: parameters.preferEndpointHints }),
      ...(parameters.signal && { signal: parameters.signal }),
    });
    out.registry = result.registry;
    // Assigned, not spread into push(): a registry of a few hundred thousand agents overflows the call stack.
    out.agents = result.agents;
    out.skipped = result.skipped;
  }
  if (parameters.agentsFile) {
    const { loadAgentsFile } = await import('./agents-file.js');
    const fromFile = await loadAgentsFile(parameters.agentsFile, common);
    const known = new Set(out.agents.map((a) => a.subject));
    for (const a of fromFile.agents) {
      if (known.has(a.subject))
        out.skipped.push({ ref: parameters.agentsFile, reason: `${a.name} is already listed in the registry` });
      else out.agents.push(a);
    }
    for (const skip of fromFile.skipped) out.skipped.push(skip);
  }
  return out;
}
