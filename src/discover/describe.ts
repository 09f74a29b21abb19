/**
 * What a resolved document describes: our agent record, an A2A agent card, or an HCS-11 profile, each turned into
 * the same pre-identity shape (`AgentDescription`). Profiles carry no standard HTTP endpoint field, so the hints
 * read here are `mcpServer.connectionInfo.url` and a few documented `properties` keys.
 */
import { z } from 'zod';
import type { Protocol } from '../core/agent.js';
import {
  UAID_PATTERN,
  UNPRINTABLE,
  agentRecordSchema,
  httpUrlSchema,
  isHttpUrl,
  looksLikeAgentRecord,
} from './agent-record.js';
import { zodReason } from './skips.js';
import { entityIdSchema } from '../core/id-schemas.js';

/** `hcs-10-register`: an HCS-10 registration whose account has no profile, described by the register message alone. */
export type DescriptionKind = 'agent-record' | 'a2a-card' | 'hcs-11-profile' | 'hcs-10-register';

/** An agent as a document describes it, before it gets its subject UAID. */
export interface AgentDescription {
  kind: DescriptionKind;
  name: string;
  protocol: Protocol;
  endpoint?: string;
  accountId?: string;
  inboundTopicId?: string;
  model?: string;
  /** UAID the document declares, if it is a well-formed one. */
  uaid?: string;
  version?: string;
  /** HCS-14 skill ids (0–39, 100+). */
  skills?: number[];
}

export type Described = { ok: true; description: AgentDescription } | { ok: false; reason: string };

const entityId = entityIdSchema;

export const a2aCardSchema = z.looseObject({
  name: z.string().trim().min(1).max(128),
  url: httpUrlSchema,
  version: z.string().max(64).optional(),
  protocolVersion: z.string().optional(),
  preferredTransport: z.string().optional(),
  additionalInterfaces: z.array(z.looseObject({ url: z.string(), transport: z.string() })).optional(),
  uaid: z.string().optional(),
  did: z.string().optional(),
});

export const hcs11ProfileSchema = z.looseObject({
  version: z.string().max(32),
  type: z.number().int(),
  display_name: z.string().trim().min(1).max(128),
  uaid: z.string().optional(),
  inboundTopicId: entityId.optional(),
  outboundTopicId: entityId.optional(),
  base_account: z.string().optional(),
  properties: z.record(z.string(), z.unknown()).optional(),
  aiAgent: z.looseObject({ capabilities: z.array(z.number()).optional(), model: z.string().optional() }).optional(),
  mcpServer: z
    .looseObject({
      version: z.string().optional(),
      connectionInfo: z.looseObject({ url: z.string(), transport: z.string().optional() }).optional(),
    })
    .optional(),
});
export type Hcs11Profile = z.infer<typeof hcs11ProfileSchema>;

/** Sorts a document into one of the three kinds and extracts the agent. */
export function describeDocument(doc: Record<string, unknown>): Described {
  if (looksLikeAgentRecord(doc)) return fromRecord(doc);
  if (typeof doc.display_name === 'string' && typeof doc.type === 'number') return fromProfile(doc);
  if (typeof doc.name === 'string' && typeof doc.url === 'string') return fromCard(doc);
  const keys = Object.keys(doc).slice(0, 6).join(', ');
  return {
    ok: false,
    reason: `document is not an agent record, an A2A agent card or an HCS-11 profile (keys: ${keys || 'none'})`,
  };
}

function fromRecord(doc: Record<string, unknown>): Described {
  const parsed = agentRecordSchema.safeParse(doc);
  if (!parsed.success) return { ok: false, reason: `invalid agent record: ${zodReason(parsed.error)}` };
  const r = parsed.data;
  // A declared UAID becomes the subject of on-chain signals; the pattern lets terminal escapes through.
  if (r.uaid !== undefined && UNPRINTABLE.test(r.uaid))
    return { ok: false, reason: 'invalid agent record: uaid: contains control characters' };
  const base = {
    kind: 'agent-record' as const,
    name: r.name,
    protocol: r.protocol,
    ...(r.uaid && { uaid: r.uaid }),
    ...(r.model && { model: r.model }),
  };
  if (r.protocol === 'hcs-10') {
    return {
      ok: true,
      description: { ...base, accountId: r.accountId, ...(r.inboundTopicId && { inboundTopicId: r.inboundTopicId }) },
    };
  }
  return { ok: true, description: { ...base, endpoint: r.endpoint } };
}

function fromCard(doc: Record<string, unknown>): Described {
  const parsed = a2aCardSchema.safeParse(doc);
  if (!parsed.success) return { ok: false, reason: `invalid A2A agent card: ${zodReason(parsed.error)}` };
  const card = parsed.data;
  // The main `url` speaks `preferredTransport` (JSON-RPC when absent); prefer a JSON-RPC interface when it is elsewhere.
  let endpoint = card.url;
  if (card.preferredTransport && card.preferredTransport.toUpperCase() !== 'JSONRPC') {
    const rpc = card.additionalInterfaces?.find((i) => i.transport.toUpperCase() === 'JSONRPC' && isHttpUrl(i.url));
    if (rpc) endpoint = rpc.url;
  }
  const uaid = declaredUaid(card.uaid) ?? declaredUaid(card.did);
  return {
    ok: true,
    description: {
      kind: 'a2a-card',
      name: card.name,
      protocol: 'a2a',
      endpoint,
      ...(uaid && { uaid }),
      ...(card.version && { version: card.version }),
    },
  };
}

/**
 * An HCS-11 profile. `accountId` comes from the context it was reached through (the HCS-10 registry entry); a
 * profile met elsewhere gets it from the inbound topic's memo later.
 */
export function fromProfile(doc: Record<string, unknown>, accountId?: string): Described {
  const parsed = hcs11ProfileSchema.safeParse(doc);
  if (!parsed.success) return { ok: false, reason: `invalid HCS-11 profile: ${zodReason(parsed.error)}` };
  const p = parsed.data;
  const hint = endpointHint(p);
  if (!hint && !p.inboundTopicId)
    return { ok: false, reason: 'HCS-11 profile has neither an inboundTopicId nor an endpoint' };
  const uaid = declaredUaid(p.uaid);
  const skills = p.aiAgent?.capabilities?.filter(isSkill);
  const model = p.aiAgent?.model ?? (typeof p.properties?.model === 'string' ? p.properties.model : undefined);
  return {
    ok: true,
    description: {
      kind: 'hcs-11-profile',
      name: p.display_name,
      protocol: hint?.protocol ?? 'hcs-10',
      ...(hint && { endpoint: hint.endpoint }),
      ...(accountId && { accountId }),
      ...(p.inboundTopicId && { inboundTopicId: p.inboundTopicId }),
      ...(uaid && { uaid }),
      ...(model && { model: model.slice(0, 200) }),
      ...(skills && skills.length > 0 && { skills }),
    },
  };
}

/**
 * Endpoint hints in a profile, first match wins: `mcpServer.connectionInfo.url`; `properties.endpoint` with
 * `properties.protocol`; `properties.a2a` / `properties.agentCard`; `properties.openai` (an OpenAI-compatible base).
 */
function endpointHint(p: Hcs11Profile): { protocol: Protocol; endpoint: string } | undefined {
  const mcp = p.mcpServer?.connectionInfo?.url;
  if (mcp && isHttpUrl(mcp)) return { protocol: 'mcp', endpoint: mcp };
  const props = p.properties ?? {};
  const str = (k: string): string | undefined =>
    typeof props[k] === 'string' && isHttpUrl(props[k]) ? props[k] : undefined;
  const proto = props.protocol;
  const generic = str('endpoint');
  if (generic && (proto === 'a2a' || proto === 'openai' || proto === 'http' || proto === 'mcp'))
    return { protocol: proto, endpoint: generic };
  const a2a = str('a2a') ?? str('agentCard');
  if (a2a) return { protocol: 'a2a', endpoint: a2a };
  const openai = str('openai');
  if (openai) return { protocol: 'openai', endpoint: openai };
  return undefined;
}

function declaredUaid(value: string | undefined): string | undefined {
  return value !== undefined && value.length <= 512 && UAID_PATTERN.test(value) && !UNPRINTABLE.test(value)
    ? value
    : undefined;
}

function isSkill(n: number): boolean {
  return Number.isInteger(n) && ((n >= 0 && n <= 39) || n >= 100);
}
