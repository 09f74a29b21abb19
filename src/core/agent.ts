/** The protocols an agent can be reached over. Matches HCS-14 `proto` values where one exists. */
export const PROTOCOLS = ['a2a', 'openai', 'http', 'mcp', 'hcs-10'] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** One agent to evaluate: who it is (subject UAID) and how to reach it. */
export interface Agent {
  /** HCS-14 UAID, the HCS-25 subject id. */
  subject: string;
  name: string;
  protocol: Protocol;
  /** URL for a2a / openai / http / mcp. */
  endpoint?: string;
  /** HCS-10 agents are reached over their inbound topic. */
  inboundTopicId?: string;
  /** Hedera account of an HCS-10 agent. */
  accountId?: string;
  /** Model name for OpenAI-compatible endpoints. */
  model?: string;
  /** HRL of the registry entry the agent came from, e.g. `hcs://2/0.0.1234`. */
  source?: string;
  /** Sequence number of the registry message that listed it. */
  registrySeq?: number;
}

/** Whether two records of one subject would be asked alike: same name, protocol and address (origin fields aside). */
export function sameAsk(a: Agent, b: Agent): boolean {
  return (
    a.subject === b.subject &&
    a.name === b.name &&
    a.protocol === b.protocol &&
    a.endpoint === b.endpoint &&
    a.inboundTopicId === b.inboundTopicId &&
    a.accountId === b.accountId &&
    a.model === b.model
  );
}

/** The host an agent is asked at: its endpoint's host, or for HCS-10 its inbound topic (asks are HCS messages). */
export function askHost(agent: {
  endpoint?: string;
  inboundTopicId?: string;
  accountId?: string;
  subject: string;
}): string {
  if (agent.endpoint) {
    try {
      return new URL(agent.endpoint).hostname.toLowerCase();
    } catch {
      // Not a URL: fall through to the agent's own identity.
    }
  }
  return agent.inboundTopicId ?? agent.accountId ?? agent.subject;
}
