import type { AgentRecord } from '../../discover/agent-record.js';
import { loadScienceBank, type ScienceBankEntry } from '../../evaluate/science.js';
import { createSolver, type KnownScienceFact } from './solver.js';
import { OPENAI_BEHAVIOURS, startOpenAiAgent, type OpenAiBehaviour } from './openai-agent.js';
import { startA2aAgent } from './a2a-agent.js';
import { startMcpAgent } from './mcp-agent.js';
import { startPlainHttpAgent } from './http-agent.js';
import type { RunningServer } from './server.js';

export const FLEET_AGENT_NAMES = [...OPENAI_BEHAVIOURS, 'a2a-calc', 'a2a-legacy', 'mcp-tools', 'plain-http'] as const;
export type FleetAgentName = (typeof FLEET_AGENT_NAMES)[number];

export interface FleetOptions {
  /** Which agents to start (default: all). */
  include?: readonly FleetAgentName[];
  /** The bank the "perfect" agents know (default: the bundled bank). */
  scienceBank?: readonly ScienceBankEntry[];
  slowMs?: number;
  hugeBytes?: number;
  flakyRetryAfterS?: number;
}

export interface AgentFleet {
  agents: AgentRecord[];
  stop(): Promise<void>;
}

/** The facts a perfect agent needs from bank entries: stem → text of the correct option. */
export function scienceFacts(bank: readonly ScienceBankEntry[]): KnownScienceFact[] {
  const letters = ['A', 'B', 'C', 'D'];
  return bank.map((q) => ({ stem: q.stem, answerText: q.options[letters.indexOf(q.answer)] ?? '' }));
}

/**
 * Starts the sample agents on 127.0.0.1 ephemeral ports and returns their agent records, ready to register
 * in a registry or pass to the runner. `stop()` closes every server, cutting held sockets (slow, huge).
 */
export async function startAgentFleet(options: FleetOptions = {}): Promise<AgentFleet> {
  const wanted = new Set<FleetAgentName>(options.include ?? FLEET_AGENT_NAMES);
  const solve = createSolver(scienceFacts(options.scienceBank ?? loadScienceBank()));
  const servers: RunningServer[] = [];
  const agents: AgentRecord[] = [];
  try {
    for (const behaviour of OPENAI_BEHAVIOURS) {
      if (!wanted.has(behaviour)) continue;
      const agent = await startOpenAiAgent({
        behaviour: behaviour as OpenAiBehaviour,
        solve,
        ...(options.slowMs === undefined ? {} : { slowMs: options.slowMs }),
        ...(options.hugeBytes === undefined ? {} : { hugeBytes: options.hugeBytes }),
        ...(options.flakyRetryAfterS === undefined ? {} : { flakyRetryAfterS: options.flakyRetryAfterS }),
      });
      servers.push(agent);
      agents.push({ name: behaviour, protocol: 'openai', endpoint: agent.origin, model: agent.model });
    }
    if (wanted.has('a2a-calc')) {
      const a2a = await startA2aAgent({ solve, name: 'a2a-calc' });
      servers.push(a2a);
      agents.push({ name: 'a2a-calc', protocol: 'a2a', endpoint: a2a.origin });
    }
    if (wanted.has('a2a-legacy')) {
      const a2a = await startA2aAgent({ solve, name: 'a2a-legacy', cardVersion: '0.3' });
      servers.push(a2a);
      agents.push({ name: 'a2a-legacy', protocol: 'a2a', endpoint: a2a.origin });
    }
    if (wanted.has('mcp-tools')) {
      const mcp = await startMcpAgent();
      servers.push(mcp);
      agents.push({ name: 'mcp-tools', protocol: 'mcp', endpoint: mcp.endpoint });
    }
    if (wanted.has('plain-http')) {
      const http = await startPlainHttpAgent(solve);
      servers.push(http);
      agents.push({ name: 'plain-http', protocol: 'http', endpoint: `${http.origin}/chat` });
    }
  } catch (err) {
    await Promise.all(servers.map((s) => s.close()));
    throw err;
  }
  let stopped = false;
  return {
    agents,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await Promise.all(servers.map((s) => s.close()));
    },
  };
}
