/**
 * Timeouts are timeouts: a server that accepts the connection and never answers, or dribbles bytes, is a `timeout`
 * for every transport, for the ask and for the probe — whatever stage it hangs at (headers, body, before the status
 * line) and whichever A2A card path it is.
 */
import type { EvalKind } from '../../../src/evaluate/types.js';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runEvals, failureOutcome } from '../../../src/evaluate/runner.js';
import type { Agent, Protocol } from '../../../src/core/agent.js';
import { buildSignalMessage, newRunKey } from '../../../src/format/index.js';
import { createTransport } from '../../../src/evaluate/transports/index.js';
import type { Transport } from '../../../src/evaluate/transports/types.js';
import type { HttpClient } from '../../../src/net/http-client.js';
import { MATH_PROMPT, agentFor, localClient, transportFor } from './helpers.js';

type Stall = 'silent' | 'headers-then-silence' | 'dribble-body' | 'dribble-headers' | 'no-read';

/** A raw TCP server on 127.0.0.1 that stalls every request the same way (`stallOn` picks which paths stall). */
async function stallingServer(
  stall: Stall,
  stallOn: (path: string) => boolean = () => true,
): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    if (stall === 'no-read') {
      socket.pause();
      return;
    }
    let head = '';
    socket.on('data', (chunk: Buffer) => {
      head += chunk.toString('latin1');
      if (!head.includes('\r\n\r\n')) return;
      const path = head.split(' ')[1] ?? '/';
      head = '';
      if (!stallOn(path)) {
        const body = JSON.stringify({ error: 'not here' });
        socket.write(
          `HTTP/1.1 404 Not Found\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
        );
        return;
      }
      const drip = (text: string, everyMs: number): void => {
        let i = 0;
        const t = setInterval(() => {
          if (socket.destroyed) return clearInterval(t);
          socket.write(text[i % text.length]!);
          i++;
        }, everyMs);
        timers.add(t);
      };
      switch (stall) {
        case 'silent':
          return;
        case 'headers-then-silence':
          socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{"jsonrpc":');
          return;
        case 'dribble-body':
          socket.write('HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n');
          drip(' ', 50);
          return;
        case 'dribble-headers':
          socket.write('HTTP/1.1 200 OK\r\n');
          drip('x-slow: y\r\n', 50);
          return;
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const STALLS: Stall[] = ['silent', 'headers-then-silence', 'dribble-body', 'dribble-headers', 'no-read'];
const ASKING: Protocol[] = ['openai', 'a2a', 'http'];
const PROBING: Protocol[] = ['openai', 'a2a', 'http', 'mcp'];
const BUDGET_MS = 600;

const servers = new Map<Stall, { url: string; close(): Promise<void> }>();

beforeAll(async () => {
  for (const stall of STALLS) servers.set(stall, await stallingServer(stall));
});

afterAll(async () => {
  await Promise.all([...servers.values()].map((s) => s.close()));
});

/**
 * The tests only wait for budgets to run out, so they run concurrently; each has its own client, so that one test's
 * stalled requests never hold the per-host slots another test needs.
 */
async function withClient<T>(fn: (client: HttpClient) => Promise<T>): Promise<T> {
  const client = localClient();
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

function endpointFor(protocol: Protocol, base: string): string {
  return protocol === 'openai' ? `${base}/v1` : protocol === 'mcp' ? `${base}/mcp` : `${base}/`;
}

describe.concurrent.each(STALLS)('a server that stalls (%s)', (stall) => {
  it.each(ASKING)('is a timeout when asked over %s', (protocol) =>
    withClient(async (client) => {
      const transport = transportFor(client, protocol, endpointFor(protocol, servers.get(stall)!.url));
      const result = await transport.ask(MATH_PROMPT, { budgetMs: BUDGET_MS });
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect({ kind: result.kind, outcome: failureOutcome(result) }).toEqual({ kind: 'timeout', outcome: 'timeout' });
      await transport.close?.();
    }),
  );

  it.each(PROBING)('is an unreachable timeout when probed over %s', (protocol) =>
    withClient(async (client) => {
      const transport = transportFor(client, protocol, endpointFor(protocol, servers.get(stall)!.url));
      const probe = await transport.probe({ budgetMs: BUDGET_MS });
      expect(probe.reachable).toBe(false);
      expect(probe.reason).toMatch(/^timeout|no answer/);
      await transport.close?.();
    }),
  );
});

/**
 * Runs the evals (default availability + math) on one agent through the runner and turns the results into HCS-25
 * signal statuses. With the probe in the run, an agent it finds unreachable is not asked the others (not measured).
 */
async function signalStatuses(
  agent: Agent,
  transport: () => Transport,
  evals: EvalKind[] = ['availability', 'math'],
): Promise<Record<string, string>> {
  const statuses: Record<string, string> = {};
  const results = runEvals([agent], {
    evals,
    budgetMs: BUDGET_MS,
    concurrency: 2,
    seed: 'hangs',
    allowPrivateEndpoints: true,
    transportFactory: transport,
  });
  for await (const result of results) {
    statuses[result.kind] = buildSignalMessage(result, {
      run: '01JH0000000000000000000000',
      runKey: newRunKey(),
    }).message.status;
  }
  return statuses;
}

describe.concurrent.each(['/.well-known/agent-card.json', '/.well-known/agent.json'])(
  'an A2A agent whose card path %s hangs',
  (cardPath) => {
    it.each(['silent', 'dribble-body', 'dribble-headers'] as const)(
      '(%s) is a timeout, not an error, for the probe and the eval',
      (stall) =>
        withClient(async (client) => {
          // This card path and message/send stall; the other card path answers 404 at once. The card's own budget is
          // shorter than the eval's, as in real runs (10 s of 30 s), so the lookup gives up on the card first.
          const server = await stallingServer(stall, (path) => path === cardPath || !path.startsWith('/.well-known/'));
          try {
            const agent = agentFor('a2a', `${server.url}/`);
            const transport = () => createTransport(agent, { client, a2a: { cardTimeoutMs: 150 } });
            // Asked one at a time: with the probe in the same run, a timed-out probe means math is not asked at all.
            const statuses = {
              ...(await signalStatuses(agent, transport, ['availability'])),
              ...(await signalStatuses(agent, transport, ['math'])),
            };
            expect(statuses).toEqual({ availability: 'timeout', math: 'timeout' });
          } finally {
            await server.close();
          }
        }),
    );
  },
);

describe.concurrent.each(STALLS)('through the runner, a server that stalls (%s)', (stall) => {
  it.each(PROBING)('gives %s signals of status timeout', (protocol) =>
    withClient(async (client) => {
      const agent = agentFor(protocol, endpointFor(protocol, servers.get(stall)!.url));
      const statuses = await signalStatuses(agent, () => createTransport(agent, { client }));
      expect(statuses.availability).toBe('timeout');
      // The probe found it unreachable, so math is not asked: not measured (missing), never a second timeout.
      expect(statuses.math).toBe('missing');
      // Asked alone, the eval itself times out (MCP cannot be asked: skipped, missing).
      const alone = await signalStatuses(agent, () => createTransport(agent, { client }), ['math']);
      expect(alone.math).toBe(protocol === 'mcp' ? 'missing' : 'timeout');
    }),
  );
});
