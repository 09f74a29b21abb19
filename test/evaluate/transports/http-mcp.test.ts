import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlainHttpAgent } from '../../../src/devtools/agents/http-agent.js';
import { startMcpAgent } from '../../../src/devtools/agents/mcp-agent.js';
import { startOpenAiAgent } from '../../../src/devtools/agents/openai-agent.js';
import { createSolver } from '../../../src/devtools/agents/solver.js';
import type { RunningServer } from '../../../src/devtools/agents/server.js';
import { extractPlainAnswer } from '../../../src/evaluate/transports/http.js';
import type { HttpClient, HttpResponse } from '../../../src/net/http-client.js';
import { MATH_PROMPT, localClient, scripted, transportFor } from './helpers.js';

const solve = createSolver([]);

function res(body: string, contentType: string): HttpResponse {
  return { status: 200, headers: { 'content-type': contentType }, contentType, body, url: 'http://x/' };
}

describe('plain HTTP transport', () => {
  let agent: RunningServer;
  let client: HttpClient;
  beforeAll(async () => {
    agent = await startPlainHttpAgent(solve);
    client = localClient();
  });
  afterAll(async () => {
    await client.close();
    await agent.close();
  });

  it('posts {"message"} and reads {"response"}', async () => {
    const r = await transportFor(client, 'http', `${agent.origin}/chat`).ask(MATH_PROMPT, { budgetMs: 5_000 });
    expect(r).toMatchObject({ ok: true, text: '95', meta: { contentType: 'application/json' } });
  });

  it('counts a 405 on GET as reachable', async () => {
    expect(await transportFor(client, 'http', `${agent.origin}/chat`).probe({ budgetMs: 5_000 })).toMatchObject({
      reachable: true,
      httpStatus: 405,
    });
  });

  it.each([
    ['text/plain', '95', '95'],
    ['application/json', '"95"', '95'],
    ['application/json', '{"reply":"95"}', '95'],
    ['application/json', '{"output":"95","text":"x"}', 'x'],
    ['application/json', '{"content":"<think>hmm</think>95"}', '95'],
  ])('reads %s %s', (type, body, expected) => {
    expect(extractPlainAnswer(res(body, type))).toBe(expected);
  });

  it.each([
    ['text/html', '<html><body>hi</body></html>', 'protocol-error'],
    ['application/json', '{"answer":95}', 'protocol-error'],
    ['application/json', '{"error":"boom"}', 'agent-error'],
    ['application/octet-stream', 'garbage', 'protocol-error'],
  ])('refuses %s %s', (type, body, kind) => {
    expect(() => extractPlainAnswer(res(body, type))).toThrow(expect.objectContaining({ kind }));
  });
});

describe('MCP transport against the official @modelcontextprotocol/sdk server', () => {
  let mcp: Awaited<ReturnType<typeof startMcpAgent>>;
  let notMcp: RunningServer;
  let client: HttpClient;
  beforeAll(async () => {
    mcp = await startMcpAgent();
    notMcp = await startOpenAiAgent({ behaviour: 'perfect', solve });
    client = localClient();
  });
  afterAll(async () => {
    await client.close();
    await mcp.close();
    await notMcp.close();
  });

  it('probes with initialize, notifications/initialized and tools/list', async () => {
    const t = transportFor(client, 'mcp', mcp.endpoint);
    const p = await t.probe({ budgetMs: 5_000 });
    expect(p).toMatchObject({ reachable: true });
    expect(p.reason).toMatch(/^mcp 2025-06-18 hcs25-sample-tools, 2 tools$/);
    expect(t.canAsk).toBe(false);
  });

  it('cannot ask: MCP has no chat operation', async () => {
    const r = await transportFor(client, 'mcp', mcp.endpoint).ask(MATH_PROMPT, { budgetMs: 1_000 });
    expect(r).toMatchObject({ ok: false, kind: 'protocol-error' });
  });

  it('reports a server that is not MCP as unreachable', async () => {
    const p = await transportFor(client, 'mcp', `${notMcp.origin}/mcp`).probe({ budgetMs: 5_000 });
    expect(p).toMatchObject({ reachable: false, httpStatus: 404 });
  });

  it('asks a stateless server that rejects initialize with server/discover', async () => {
    const server = await scripted((_req, r, body) => {
      const msg = JSON.parse(body) as { id: number; method: string };
      r.writeHead(msg.method === 'initialize' ? 400 : 200, { 'content-type': 'application/json' });
      r.end(
        JSON.stringify(
          msg.method === 'initialize'
            ? { error: 'unsupported' }
            : { jsonrpc: '2.0', id: msg.id, result: { serverInfo: { name: 's' } } },
        ),
      );
    });
    const p = await transportFor(client, 'mcp', server.origin).probe({ budgetMs: 5_000 });
    expect(p).toMatchObject({ reachable: true, reason: 'mcp 2026-07-28 (stateless)' });
    expect(server.requests[1]!.headers['mcp-method']).toBe('server/discover');
    await server.close();
  });
});
