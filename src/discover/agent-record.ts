/**
 * Our agent record: the simplest description of an agent a registry entry (or an `--agents` file) can carry.
 * `schemas/agent-record.schema.json` is generated from `agentRecordSchema`.
 */
import { z } from 'zod';
import { entityIdSchema as entityId } from '../core/id-schemas.js';
import { TERMINAL_UNSAFE } from '../core/terminal.js';

/** HCS-14 UAID: `uaid:{aid|did}:{id}[;key=value…]`, the id without `;`. */
export const UAID_PATTERN = /^uaid:(aid|did):[^;\s]+(;[A-Za-z][A-Za-z0-9_-]*=[^;\s]*)*$/;

const common = {
  name: z.string().trim().min(1).max(128).describe('Display name of the agent'),
  uaid: z
    .string()
    .max(512)
    .regex(UAID_PATTERN, 'must be an HCS-14 UAID (uaid:aid:… or uaid:did:…)')
    .optional()
    .describe("The agent's declared HCS-14 UAID; when absent one is derived"),
  model: z.string().trim().min(1).max(200).optional().describe('Model name sent to OpenAI-compatible endpoints'),
};

/** Characters that, printed, could drive a terminal or reorder text (see core/terminal.ts). */
export const UNPRINTABLE = TERMINAL_UNSAFE;

/** http(s) with a host, no embedded credentials, and nothing unprintable (the URL parser tolerates controls). */
export function isHttpUrl(value: string): boolean {
  if (UNPRINTABLE.test(value)) return false;
  try {
    const u = new URL(value);
    return (u.protocol === 'https:' || u.protocol === 'http:') && u.hostname !== '' && !u.username && !u.password;
  } catch {
    return false;
  }
}

export const httpUrlSchema = z
  .url({ protocol: /^https?$/ })
  .max(2048)
  .refine(isHttpUrl, 'must be an http(s) URL without credentials');

export const agentRecordSchema = z
  .discriminatedUnion('protocol', [
    z.object({
      ...common,
      protocol: z.enum(['a2a', 'openai', 'http', 'mcp']).describe('How the agent is reached'),
      endpoint: httpUrlSchema.describe('Endpoint URL (A2A: the agent card URL or JSON-RPC URL)'),
    }),
    z.object({
      ...common,
      protocol: z.literal('hcs-10'),
      accountId: entityId.describe('Hedera account of the agent (its HCS-11 profile gives the inbound topic)'),
      inboundTopicId: entityId.optional().describe('HCS-10 inbound topic; read from the profile when absent'),
    }),
  ])
  .describe('hcs25 agent record');

export type AgentRecord = z.infer<typeof agentRecordSchema>;

/** Whether a parsed JSON document looks like it means to be an agent record (used to classify metadata). */
export function looksLikeAgentRecord(doc: Record<string, unknown>): boolean {
  return typeof doc.protocol === 'string' && typeof doc.name === 'string' && ('endpoint' in doc || 'accountId' in doc);
}
