import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startA2aAgent } from '../../../src/devtools/agents/a2a-agent.js';
import { createSolver } from '../../../src/devtools/agents/solver.js';
import type { RunningServer } from '../../../src/devtools/agents/server.js';
import { cardCandidates, repairCardUrl } from '../../../src/evaluate/transports/a2a-card.js';
import { foldResults, taskAnswer } from '../../../src/evaluate/transports/a2a-extract.js';
import type { HttpClient } from '../../../src/net/http-client.js';
import { MATH_PROMPT, json, localClient, scripted, transportFor } from './helpers.js';

const solve = createSolver([]);

describe('A2A against the official @a2a-js/sdk server', () => {
  let both: RunningServer;
  let legacy: RunningServer;
  let messageOnly: RunningServer;
  let client: HttpClient;

  beforeAll(async () => {
    client = localClient();
    both = await startA2aAgent({ solve });
    legacy = await startA2aAgent({ solve, cardVersion: '0.3' });
    messageOnly = await startA2aAgent({ solve, reply: 'message' });
  });
  afterAll(async () => {
    await client.close();
    await Promise.all([both.close(), legacy.close(), messageOnly.close()]);
  });

  it('picks v1.0 from the card (1.0 listed first) and reads the answer from the task artifact', async () => {
    const r = await transportFor(client, 'a2a', both.origin).ask(MATH_PROMPT, { budgetMs: 5_000 });
    expect(r).toMatchObject({
      ok: true,
      text: '95',
      meta: { dialect: 'v1.0', result: 'task', state: 'completed', card: true },
    });
  });

  it('speaks v0.3 (message/send, kind parts) to the same server through its compat layer', async () => {
    const r = await transportFor(client, 'a2a', both.origin, { a2a: { dialect: 'v0.3' } }).ask(MATH_PROMPT, {
      budgetMs: 5_000,
    });
    expect(r).toMatchObject({ ok: true, text: '95', meta: { dialect: 'v0.3', result: 'task', state: 'completed' } });
  });

  it('uses v0.3 when the card declares only a 0.3 interface', async () => {
    const r = await transportFor(client, 'a2a', legacy.origin).ask(MATH_PROMPT, { budgetMs: 5_000 });
    expect(r).toMatchObject({ ok: true, text: '95', meta: { dialect: 'v0.3' } });
  });

  it('sees a 0.3-only server refuse v1.0 with -32009 VersionNotSupported', async () => {
    const r = await transportFor(client, 'a2a', legacy.origin, { a2a: { dialect: 'v1.0' } }).ask(MATH_PROMPT, {
      budgetMs: 5_000,
    });
    expect(r).toMatchObject({ ok: false, kind: 'agent-error' });
    if (!r.ok) expect(r.message).toMatch(/-32009/);
  });

  it('reads a direct Message reply in both dialects', async () => {
    for (const dialect of ['v1.0', 'v0.3'] as const) {
      const r = await transportFor(client, 'a2a', messageOnly.origin, { a2a: { dialect } }).ask(MATH_PROMPT, {
        budgetMs: 5_000,
      });
      expect(r).toMatchObject({ ok: true, text: '95', meta: { dialect, result: 'message' } });
    }
  });

  it('accepts the card URL or the JSON-RPC URL as the endpoint', async () => {
    for (const endpoint of [`${both.origin}/.well-known/agent-card.json`, `${both.origin}/a2a/jsonrpc`]) {
      const r = await transportFor(client, 'a2a', endpoint).ask(MATH_PROMPT, { budgetMs: 5_000 });
      expect(r).toMatchObject({ ok: true, text: '95' });
    }
  });

  it('probes the agent card', async () => {
    const p = await transportFor(client, 'a2a', both.origin).probe({ budgetMs: 5_000 });
    expect(p).toMatchObject({ reachable: true, httpStatus: 200 });
    expect(p.reason).toMatch(/agent card \(v1\.0\)/);
  });
});

/** A hand-scripted A2A server for the shapes the SDK server does not produce. */
async function mockAgent(opts: {
  card?: (origin: string) => unknown;
  cardPath?: string;
  rpc: (
    method: string,
    params: Record<string, unknown>,
    origin: string,
  ) => { status?: number; contentType?: string; body: unknown };
}) {
  const server = await scripted((req, res, body) => {
    const origin = `http://127.0.0.1:${server.port}`;
    const path = (req.url ?? '/').split('?')[0];
    if (req.method === 'GET') {
      if (opts.card && path === (opts.cardPath ?? '/.well-known/agent-card.json'))
        return json(res, 200, opts.card(origin));
      return json(res, 404, { error: 'not found' });
    }
    const rpc = JSON.parse(body) as { id: string; method: string; params: Record<string, unknown> };
    const out = opts.rpc(rpc.method, rpc.params, origin);
    const wrap = (payload: unknown) => ({ jsonrpc: '2.0', id: rpc.id, ...(payload as object) });
    if (out.contentType === 'text/event-stream') {
      res.writeHead(out.status ?? 200, { 'content-type': 'text/event-stream' });
      res.end(
        (out.body as unknown[]).map((e) => `event: message\ndata: ${JSON.stringify(wrap({ result: e }))}\n\n`).join(''),
      );
    } else if (out.contentType === 'application/x-ndjson') {
      res.writeHead(out.status ?? 200, { 'content-type': 'application/x-ndjson' });
      res.end((out.body as unknown[]).map((e) => JSON.stringify(wrap({ result: e }))).join('\n'));
    } else {
      json(res, out.status ?? 200, wrap(out.body));
    }
  });
  return server;
}

const v1Card = (origin: string) => ({
  name: 'mock',
  supportedInterfaces: [{ url: `${origin}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
});
const v03Card = (origin: string) => ({
  name: 'mock',
  protocolVersion: '0.3.0',
  url: `${origin}/rpc`,
  preferredTransport: 'JSONRPC',
});
const text = (t: string) => ({ kind: 'text', text: t });

describe('A2A tolerance (scripted servers)', () => {
  let client: HttpClient;
  beforeAll(() => {
    client = localClient();
  });
  afterAll(async () => {
    await client.close();
  });

  it('falls back once to message/send when SendMessage is not found, and remembers', async () => {
    const server = await mockAgent({
      card: v1Card,
      rpc: (method) =>
        method === 'SendMessage'
          ? { body: { error: { code: -32601, message: 'Method not found' } } }
          : { body: { result: { kind: 'message', role: 'agent', messageId: 'm', parts: [text('95')] } } },
    });
    const t = transportFor(client, 'a2a', server.origin);
    expect(await t.ask(MATH_PROMPT, { budgetMs: 5_000 })).toMatchObject({
      ok: true,
      text: '95',
      meta: { dialect: 'v0.3' },
    });
    expect(await t.ask(MATH_PROMPT, { budgetMs: 5_000 })).toMatchObject({ ok: true, meta: { dialect: 'v0.3' } });
    const methods = server.requests.filter((r) => r.method === 'POST').map((r) => JSON.parse(r.body).method);
    expect(methods).toEqual(['SendMessage', 'message/send', 'message/send']);
    const v1Request = server.requests.find((r) => r.body.includes('SendMessage'))!;
    expect(v1Request.headers['a2a-version']).toBe('1.0');
    await server.close();
  });

  it('shares one card lookup between a probe and asks started together', async () => {
    const server = await mockAgent({
      card: v03Card,
      rpc: () => ({ body: { result: { kind: 'message', role: 'agent', parts: [text('95')] } } }),
    });
    const t = transportFor(client, 'a2a', server.origin);
    const [probe, a, b] = await Promise.all([
      t.probe({ budgetMs: 5_000 }),
      t.ask(MATH_PROMPT, { budgetMs: 5_000 }),
      t.ask(MATH_PROMPT, { budgetMs: 5_000 }),
    ]);
    expect(probe).toMatchObject({ reachable: true });
    expect([a.ok, b.ok]).toEqual([true, true]);
    expect(server.requests.filter((r) => r.method === 'GET')).toHaveLength(1);
    await server.close();
  });

  it('says so when the agent speaks neither dialect', async () => {
    const server = await mockAgent({
      card: v1Card,
      rpc: () => ({ body: { error: { code: -32601, message: 'Method not found' } } }),
    });
    const r = await transportFor(client, 'a2a', server.origin).ask(MATH_PROMPT, { budgetMs: 5_000 });
    expect(r).toMatchObject({ ok: false, kind: 'protocol-error' });
    await server.close();
  });

  it('finds a card only on the legacy agent.json path and polls tasks/get until the task completes', async () => {
    let polls = 0;
    const server = await mockAgent({
      card: v03Card,
      cardPath: '/.well-known/agent.json',
      rpc: (method) => {
        if (method === 'message/send')
          return { body: { result: { kind: 'task', id: 't1', status: { state: 'submitted' } } } };
        polls += 1;
        return polls < 2
          ? { body: { result: { kind: 'task', id: 't1', status: { state: 'working' } } } }
          : {
              body: {
                result: {
                  kind: 'task',
                  id: 't1',
                  status: { state: 'completed' },
                  artifacts: [{ artifactId: 'a', parts: [text('95')] }],
                },
              },
            };
      },
    });
    const r = await transportFor(client, 'a2a', server.origin).ask(MATH_PROMPT, { budgetMs: 10_000 });
    expect(r).toMatchObject({ ok: true, text: '95', meta: { dialect: 'v0.3', state: 'completed' } });
    expect(polls).toBe(2);
    const getTask = server.requests.find((q) => q.body.includes('tasks/get'))!;
    expect(JSON.parse(getTask.body).params).toMatchObject({ id: 't1' });
    await server.close();
  });

  it('stops polling when the budget runs out', async () => {
    const server = await mockAgent({
      card: v03Card,
      rpc: () => ({ body: { result: { kind: 'task', id: 't1', status: { state: 'working' } } } }),
    });
    const r = await transportFor(client, 'a2a', server.origin).ask(MATH_PROMPT, { budgetMs: 1_500 });
    expect(r).toMatchObject({ ok: false, kind: 'timeout' });
    await server.close();
  });

  it('reassembles a v1.0 SSE stream sent where JSON was asked for (artifact chunks appended)', async () => {
    const server = await mockAgent({
      card: v1Card,
      rpc: () => ({
        contentType: 'text/event-stream',
        body: [
          { task: { id: 't', status: { state: 'TASK_STATE_WORKING' } } },
          { artifactUpdate: { taskId: 't', artifact: { artifactId: 'a', parts: [{ text: '9' }] }, append: false } },
          { artifactUpdate: { taskId: 't', artifact: { artifactId: 'a', parts: [{ text: '5' }] }, append: true } },
          { statusUpdate: { taskId: 't', status: { state: 'TASK_STATE_COMPLETED' } } },
        ],
      }),
    });
    const r = await transportFor(client, 'a2a', server.origin).ask(MATH_PROMPT, { budgetMs: 5_000 });
    expect(r).toMatchObject({ ok: true, text: '9\n5', meta: { state: 'completed' } });
    await server.close();
  });

  it('reads a v0.3 NDJSON stream whose answer is in the final status message', async () => {
    const server = await mockAgent({
      card: v03Card,
      rpc: () => ({
        contentType: 'application/x-ndjson',
        body: [
          { kind: 'task', id: 't', status: { state: 'working' } },
          {
            kind: 'status-update',
            taskId: 't',
            status: { state: 'completed', message: { role: 'agent', parts: [text('95')] } },
            final: true,
          },
        ],
      }),
    });
    expect(await transportFor(client, 'a2a', server.origin).ask(MATH_PROMPT, { budgetMs: 5_000 })).toMatchObject({
      ok: true,
      text: '95',
    });
    await server.close();
  });

  it('never grades the question echoed in history', async () => {
    const server = await mockAgent({
      card: v03Card,
      rpc: () => ({
        body: {
          result: {
            kind: 'task',
            id: 't',
            status: { state: 'completed' },
            history: [{ role: 'user', parts: [text(MATH_PROMPT)] }],
          },
        },
      }),
    });
    expect(await transportFor(client, 'a2a', server.origin).ask(MATH_PROMPT, { budgetMs: 5_000 })).toMatchObject({
      ok: true,
      text: '',
    });
    await server.close();
  });

  it('reports a failed task as an agent error, and 401 as auth-required', async () => {
    const failed = await mockAgent({
      card: v03Card,
      rpc: () => ({
        body: {
          result: {
            kind: 'task',
            id: 't',
            status: { state: 'failed', message: { role: 'agent', parts: [text('LLM quota exceeded')] } },
          },
        },
      }),
    });
    const r = await transportFor(client, 'a2a', failed.origin).ask(MATH_PROMPT, { budgetMs: 5_000 });
    expect(r).toMatchObject({ ok: false, kind: 'agent-error' });
    if (!r.ok) expect(r.message).toMatch(/task failed: LLM quota exceeded/);
    await failed.close();

    const locked = await mockAgent({
      card: v03Card,
      rpc: () => ({ status: 401, body: { error: { code: -32000, message: 'unauthorized' } } }),
    });
    expect(await transportFor(client, 'a2a', locked.origin).ask(MATH_PROMPT, { budgetMs: 5_000 })).toMatchObject({
      ok: false,
      kind: 'auth-required',
    });
    await locked.close();
  });

  it('maps a plain 401 without a JSON-RPC body to auth-required', async () => {
    const server = await scripted((req, res) => {
      if (req.method === 'GET') return json(res, 404, {});
      res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
    });
    expect(await transportFor(client, 'a2a', server.origin).ask(MATH_PROMPT, { budgetMs: 5_000 })).toMatchObject({
      ok: false,
      kind: 'auth-required',
      httpStatus: 401,
    });
    await server.close();
  });

  it('uses the endpoint as a v0.3 JSON-RPC URL when no card exists', async () => {
    const server = await mockAgent({
      rpc: () => ({ body: { result: { kind: 'message', role: 'agent', parts: [text('95')] } } }),
    });
    const r = await transportFor(client, 'a2a', `${server.origin}/a2a`).ask(MATH_PROMPT, { budgetMs: 5_000 });
    expect(r).toMatchObject({ ok: true, text: '95', meta: { dialect: 'v0.3', card: false } });
    expect(server.requests.filter((q) => q.method === 'POST')[0]!.url).toBe('/a2a');
    await server.close();
  });
});

describe('A2A card and extraction helpers', () => {
  it('lists the well-known card paths, most specific first', () => {
    expect(cardCandidates('https://a.example/agents/calc/')).toEqual([
      'https://a.example/agents/calc/.well-known/agent-card.json',
      'https://a.example/agents/calc/.well-known/agent.json',
      'https://a.example/.well-known/agent-card.json',
      'https://a.example/.well-known/agent.json',
    ]);
    expect(cardCandidates('https://a.example/card.json')).toEqual(['https://a.example/card.json']);
  });

  it('repairs card URLs that point at a bind address, are relative, or point at the card itself', () => {
    const card = 'https://agent.example/.well-known/agent-card.json';
    expect(repairCardUrl('http://0.0.0.0:8000/a2a', card, 'https://agent.example')).toBe('https://agent.example/a2a');
    expect(repairCardUrl('http://localhost:41241/', card, 'https://agent.example')).toBe('https://agent.example/');
    expect(repairCardUrl('/rpc', card, 'https://agent.example')).toBe('https://agent.example/rpc');
    expect(repairCardUrl(card, card, 'https://agent.example/x')).toBe('https://agent.example/x');
    expect(repairCardUrl('https://other.example/rpc', card, 'https://agent.example')).toBe('https://other.example/rpc');
  });

  it('prefers artifacts, then the status message, then the last agent history entry', () => {
    const reply = foldResults([
      {
        kind: 'task',
        id: 't',
        status: { state: 'completed', message: { role: 'agent', parts: [text('status')] } },
        history: [
          { role: 'agent', parts: [text('history')] },
          { role: 'user', parts: [text('question')] },
        ],
      },
    ]);
    expect(reply?.type).toBe('task');
    if (reply?.type !== 'task') return;
    expect(taskAnswer(reply.task)).toBe('status');
    expect(taskAnswer({ ...reply.task, statusParts: [] })).toBe('history');
    expect(taskAnswer({ ...reply.task, artifacts: [{ id: 'a', parts: [text('artifact')] }] })).toBe('artifact');
  });

  it('serialises data parts only when there is no text', () => {
    const reply = foldResults([{ message: { role: 'ROLE_AGENT', parts: [{ data: { answer: 95 } }] } }]);
    expect(reply).toEqual({ type: 'message', parts: [{ data: { answer: 95 } }] });
  });
});
