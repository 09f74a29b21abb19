import type { IncomingMessage, ServerResponse } from 'node:http';
import { buildConnector } from 'undici';
import type { Agent, Protocol } from '../../../src/core/agent.js';
import { HttpClient, type HttpClientOptions } from '../../../src/net/http-client.js';
import { createTransport, type CreateTransportOptions } from '../../../src/evaluate/transports/index.js';
import type { Transport } from '../../../src/evaluate/transports/types.js';
import { startHttpServer, type RunningServer } from '../../../src/devtools/agents/server.js';

export const MATH_PROMPT = 'Answer with just the number.\n\nWhat is 37 + 58?';

export function agentFor(protocol: Protocol, endpoint: string, extra: Partial<Agent> = {}): Agent {
  return {
    subject: `uaid:aid:test-${protocol};uid=0;proto=${protocol};nativeId=127.0.0.1`,
    name: 'test',
    protocol,
    endpoint,
    ...extra,
  };
}

/** A client for the local fleet: private endpoints allowed, as on `--network local`. */
export function localClient(extra: Partial<HttpClientOptions> = {}): HttpClient {
  return new HttpClient({ allowPrivateEndpoints: true, ...extra });
}

export function transportFor(
  client: HttpClient,
  protocol: Protocol,
  endpoint: string,
  options: Omit<CreateTransportOptions, 'client'> = {},
): Transport {
  return createTransport(agentFor(protocol, endpoint), { ...options, client });
}

/**
 * A fake network: names resolve through `names`, and every dial goes to 127.0.0.1 on the URL's port, so a
 * "public" host can be served by a local test server without touching the real network.
 */
export function fakeNetwork(names: Record<string, string>): Pick<HttpClientOptions, 'resolver' | 'baseConnector'> {
  const real = buildConnector({});
  return {
    resolver: async (hostname) => {
      const address = names[hostname];
      if (!address) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return [{ address, family: address.includes(':') ? 6 : 4 }];
    },
    baseConnector: (opts, cb) => real({ ...opts, hostname: '127.0.0.1' }, cb),
  };
}

export type Handler = (req: IncomingMessage, res: ServerResponse, body: string) => void | Promise<void>;

/** A scripted HTTP server that records requests. */
export async function scripted(handler: Handler): Promise<
  RunningServer & {
    requests: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }>;
  }
> {
  const requests: Array<{ method: string; url: string; headers: IncomingMessage['headers']; body: string }> = [];
  const server = await startHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      void Promise.resolve(handler(req, res, body)).catch(() => res.destroy());
    });
  });
  return Object.assign(server, { requests });
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
