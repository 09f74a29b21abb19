import type { Agent } from '../../core/agent.js';
import type { AskOptions, AskResult, ProbeResult, Transport } from './types.js';
import type { TransportContext } from './base.js';
import { HttpClient, TransportError, type HttpClientOptions } from '../../net/http-client.js';
import { OpenAiTransport } from './openai.js';
import { A2aTransport, type A2aTransportOptions } from './a2a.js';
import { PlainHttpTransport } from './http.js';
import { McpTransport } from './mcp.js';
import { createHcs10Transport, type Hcs10TransportOptions } from './hcs10.js';

export interface CreateTransportOptions {
  /** The run's shared client. When absent, the transport makes (and on close() releases) its own. */
  client?: HttpClient;
  /** Used only when no client is given. */
  allowPrivateEndpoints?: boolean;
  clientOptions?: Omit<HttpClientOptions, 'allowPrivateEndpoints'>;
  /** This agent's own headers, already resolved from env (see resolveAgentHeaders). */
  headers?: Record<string, string>;
  a2a?: A2aTransportOptions;
  /** HCS-10 agents are asked over HCS: the runner's Hedera client, identity and mirror (without them they are skipped). */
  hcs10?: Hcs10TransportOptions;
}

/**
 * A transport for an agent that cannot be asked: no endpoint, a bad URL, or a protocol without a transport here
 * (HCS-10 messaging lives elsewhere). Its probe says why; its evals are `skipped`.
 */
export class UnavailableTransport implements Transport {
  readonly canAsk = false;
  constructor(
    readonly protocol: Agent['protocol'],
    private readonly reason: string,
  ) {}
  ask(_prompt: string, _options: AskOptions): Promise<AskResult> {
    return Promise.resolve({ ok: false, kind: 'protocol-error', message: this.reason, transient: false, latencyMs: 0 });
  }
  probe(_options: AskOptions): Promise<ProbeResult> {
    return Promise.resolve({ reachable: false, latencyMs: 0, reason: this.reason });
  }
}

export function createTransport(agent: Agent, options: CreateTransportOptions = {}): Transport {
  // HCS-10 uses no HTTP client, and its own close() ends the HCS-10 connection.
  if (agent.protocol === 'hcs-10' && options.hcs10) return createHcs10Transport(agent, options.hcs10);
  const owned = options.client === undefined;
  const client =
    options.client ??
    new HttpClient({ ...options.clientOptions, allowPrivateEndpoints: options.allowPrivateEndpoints ?? false });
  const ctx: TransportContext = { client, secretHeaders: options.headers ?? {} };
  let transport: Transport;
  try {
    switch (agent.protocol) {
      case 'openai':
        transport = new OpenAiTransport(agent, ctx);
        break;
      case 'a2a':
        transport = new A2aTransport(agent, ctx, options.a2a);
        break;
      case 'http':
        transport = new PlainHttpTransport(agent, ctx);
        break;
      case 'mcp':
        transport = new McpTransport(agent, ctx);
        break;
      case 'hcs-10':
        transport = new UnavailableTransport(
          agent.protocol,
          "HCS-10 agents need the runner's HCS-10 identity and a Hedera client (hcs25 identity create)",
        );
        break;
      default:
        transport = new UnavailableTransport(agent.protocol, `no ${agent.protocol} transport in the eval runner yet`);
    }
  } catch (err) {
    transport = new UnavailableTransport(
      agent.protocol,
      err instanceof TransportError ? err.message : 'invalid agent endpoint',
    );
  }
  if (!owned) return transport;
  const inner = transport;
  return {
    protocol: inner.protocol,
    canAsk: inner.canAsk,
    ask: (prompt, o) => inner.ask(prompt, o),
    probe: (o) => inner.probe(o),
    close: () => client.close(),
  };
}

export { HttpClient, TransportError } from '../../net/http-client.js';
export type { HttpClientOptions } from '../../net/http-client.js';
export { resolveAgentHeaders, type AgentHeaderConfig } from './headers.js';
export { isNonPublicAddress, type Resolver } from '../../net/guard.js';
export { createHcs10Transport, DEFAULT_HCS10_BUDGET_MS, type Hcs10TransportOptions } from './hcs10.js';
export type * from './types.js';
