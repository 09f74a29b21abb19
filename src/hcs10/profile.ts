/**
 * The HCS-11 AI-agent profile we write for an HCS-10 identity (ours, and the sample agents'). Only fields the
 * standard defines; `aiAgent` is required by the standards-sdk's schema (test/hcs10/profile.test.ts checks against it).
 */
import { formatHrl } from '../core/hrl.js';

/** HCS-11 AI agent capability enums used here (0 text generation, 7 knowledge retrieval & reasoning, 16 multi-agent coordination). */
export const CAPABILITY = { textGeneration: 0, knowledgeRetrieval: 7, multiAgentCoordination: 16 } as const;

export interface AgentProfileInput {
  displayName: string;
  inboundTopicId: string;
  outboundTopicId: string;
  alias?: string;
  bio?: string;
  /** HCS-14 UAID, when the agent has one to declare. */
  uaid?: string;
  model?: string;
  creator?: string;
  /** 0 manual (answers requests), 1 autonomous. Default 0. */
  agentType?: 0 | 1;
  capabilities?: number[];
  properties?: Record<string, unknown>;
}

export function buildAgentProfile(input: AgentProfileInput): Record<string, unknown> {
  return {
    version: '1.0',
    type: 1,
    display_name: input.displayName,
    ...(input.alias !== undefined && { alias: input.alias }),
    ...(input.bio !== undefined && { bio: input.bio }),
    ...(input.uaid !== undefined && { uaid: input.uaid }),
    inboundTopicId: input.inboundTopicId,
    outboundTopicId: input.outboundTopicId,
    ...(input.properties !== undefined && { properties: input.properties }),
    aiAgent: {
      type: input.agentType ?? 0,
      capabilities: input.capabilities ?? [CAPABILITY.textGeneration],
      model: input.model ?? 'none',
      ...(input.creator !== undefined && { creator: input.creator }),
    },
  };
}

/** The account memo pointing at a profile stored as an HCS-1 file. */
export function hcs11AccountMemo(profileTopicId: string): string {
  return `hcs-11:${formatHrl(1, profileTopicId)}`;
}
