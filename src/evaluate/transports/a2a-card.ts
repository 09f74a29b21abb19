import { z } from 'zod';
import { Deadline, TransportError, type HttpClient } from '../../net/http-client.js';
import { bareHost } from '../../net/guard.js';

export type A2aDialect = 'v0.3' | 'v1.0';

/** Where and how to send JSON-RPC to an A2A agent. */
export interface A2aTarget {
  rpcUrl: string;
  dialect: A2aDialect;
  tenant?: string;
  streaming: boolean;
  /** The card URL that answered, or undefined when no card was found and the endpoint is used as is. */
  cardUrl?: string;
  /** HTTP status of the last card request (for the availability probe). */
  cardStatus?: number;
  /** The card URL that accepted the request and did not answer (in full) within the card's budget. */
  cardTimedOut?: { url: string; budgetMs: number };
  agentName?: string;
}

export const CARD_TIMEOUT_MS = 10_000;

const interfaceSchema = z.looseObject({
  url: z.string(),
  protocolBinding: z.string().optional(),
  transport: z.string().optional(),
  protocolVersion: z.string().optional(),
  tenant: z.string().optional(),
});
const cardSchema = z.looseObject({
  name: z.string().optional(),
  url: z.string().optional(),
  preferredTransport: z.string().optional(),
  protocolVersion: z.string().optional(),
  additionalInterfaces: z.array(interfaceSchema).optional(),
  supportedInterfaces: z.array(interfaceSchema).optional(),
  capabilities: z.looseObject({ streaming: z.boolean().optional() }).optional(),
});
type Card = z.infer<typeof cardSchema>;

/** Well-known card locations to try, most specific first (digest §1.9). */
export function cardCandidates(endpoint: string): string[] {
  const url = new URL(endpoint);
  url.search = '';
  url.hash = '';
  if (url.pathname.endsWith('.json')) return [url.toString()];
  const path = url.pathname.replace(/\/+$/, '');
  const bases = path === '' ? [url.origin] : [`${url.origin}${path}`, url.origin];
  return bases.flatMap((b) => [`${b}/.well-known/agent-card.json`, `${b}/.well-known/agent.json`]);
}

function isLoopbackName(hostname: string): boolean {
  const h = bareHost(hostname).toLowerCase();
  return h === 'localhost' || h === '0.0.0.0' || h === '::' || h === '::1' || h.startsWith('127.');
}

/**
 * The card's URL, repaired the way real clients must: relative → resolved against the card; `localhost`/`0.0.0.0`
 * on a card served from elsewhere → the serving origin (agents behind proxies publish their bind address); the
 * card URL itself → the endpoint we were given.
 */
export function repairCardUrl(raw: string, cardUrl: string, endpoint: string): string {
  let url: URL;
  try {
    url = new URL(raw, cardUrl);
  } catch {
    return endpoint;
  }
  const served = new URL(cardUrl);
  if (url.toString() === served.toString()) return endpoint;
  if (isLoopbackName(url.hostname) && !isLoopbackName(served.hostname)) {
    return `${served.origin}${url.pathname}${url.search}`;
  }
  return url.toString();
}

function dialectOf(version: string | undefined): A2aDialect {
  const major = Number((version ?? '').split('.')[0]);
  return Number.isFinite(major) && major >= 1 ? 'v1.0' : 'v0.3';
}

/** Picks the JSON-RPC interface: v1.0 `supportedInterfaces` first (hybrid cards carry both), else v0.3 fields. */
export function chooseInterface(card: Card, cardUrl: string, endpoint: string): A2aTarget | undefined {
  const streaming = card.capabilities?.streaming === true;
  const base = { streaming, cardUrl, ...(card.name ? { agentName: card.name } : {}) };
  const modern = (card.supportedInterfaces ?? []).find((i) => (i.protocolBinding ?? '').toUpperCase() === 'JSONRPC');
  if (modern) {
    return {
      ...base,
      rpcUrl: repairCardUrl(modern.url, cardUrl, endpoint),
      dialect: dialectOf(modern.protocolVersion ?? '1.0'),
      ...(modern.tenant ? { tenant: modern.tenant } : {}),
    };
  }
  const preferred = (card.preferredTransport ?? 'JSONRPC').toUpperCase();
  if (card.url && preferred === 'JSONRPC') {
    return { ...base, rpcUrl: repairCardUrl(card.url, cardUrl, endpoint), dialect: 'v0.3' };
  }
  const extra = (card.additionalInterfaces ?? []).find((i) => (i.transport ?? '').toUpperCase() === 'JSONRPC');
  if (extra) return { ...base, rpcUrl: repairCardUrl(extra.url, cardUrl, endpoint), dialect: 'v0.3' };
  return undefined;
}

/**
 * Fetches the agent card from the well-known paths. A missing card is not fatal (many agents serve none): the
 * endpoint is then used as a v0.3 JSON-RPC URL. Card fetching gets its own short budget inside the ask's budget.
 */
export async function resolveA2aTarget(
  client: HttpClient,
  endpoint: string,
  secretHeaders: Record<string, string>,
  deadline: Deadline,
  cardTimeoutMs = CARD_TIMEOUT_MS,
): Promise<A2aTarget> {
  let lastStatus: number | undefined;
  let cardTimedOut: A2aTarget['cardTimedOut'];
  for (const candidate of cardCandidates(endpoint)) {
    const sub = new Deadline(Math.min(cardTimeoutMs, deadline.remaining()), deadline.signal);
    try {
      // Ask as a v1.0 client: a v1.0 server treats a header-less request as v0.3 and may refuse the card (the
      // a2a-js server answers 400/-32009 when its card declares no 0.3 interface); v0.3 servers ignore the header.
      const get = (headers: Record<string, string>) =>
        client.request(candidate, {
          method: 'GET',
          headers: { accept: 'application/json', ...headers },
          secretHeaders,
          deadline: sub,
        });
      let res = await get({ 'a2a-version': '1.0' });
      if (res.status === 400) res = await get({});
      lastStatus = res.status;
      if (res.status === 401 || res.status === 403) {
        throw new TransportError('auth-required', `HTTP ${res.status} on the agent card`, { httpStatus: res.status });
      }
      if (res.status >= 500)
        throw new TransportError('http-error', `HTTP ${res.status} on the agent card`, {
          httpStatus: res.status,
          transient: res.status !== 500,
        });
      if (res.status !== 200) continue;
      let doc: unknown;
      try {
        doc = JSON.parse(res.body);
      } catch {
        continue; // an HTML catch-all page is "no card here"
      }
      const parsed = cardSchema.safeParse(doc);
      if (!parsed.success) continue;
      const target = chooseInterface(parsed.data, res.url, endpoint);
      if (!target) {
        throw new TransportError('protocol-error', 'the agent card lists no JSON-RPC interface', {
          httpStatus: res.status,
        });
      }
      return { ...target, cardStatus: res.status };
    } catch (err) {
      // The card's own budget ran out: stop looking and try the endpoint itself with what is left. The probe must
      // still call this a timeout (a silent card path is not a live agent), so it is remembered.
      if (sub.timedOut && !deadline.signal.aborted) {
        cardTimedOut = { url: candidate, budgetMs: sub.budgetMs };
        break;
      }
      throw err;
    } finally {
      sub.dispose();
    }
  }
  return {
    rpcUrl: endpoint,
    dialect: 'v0.3',
    streaming: false,
    ...(lastStatus === undefined ? {} : { cardStatus: lastStatus }),
    ...(cardTimedOut && { cardTimedOut }),
  };
}
