import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  OPENAI_BEHAVIOURS,
  startOpenAiAgent,
  type OpenAiBehaviour,
} from '../../../src/devtools/agents/openai-agent.js';
import { createSolver } from '../../../src/devtools/agents/solver.js';
import type { RunningServer } from '../../../src/devtools/agents/server.js';
import { chatCompletionsUrl, extractCompletion } from '../../../src/evaluate/transports/openai.js';
import type { HttpClient, HttpResponse } from '../../../src/net/http-client.js';
import { MATH_PROMPT, json, localClient, scripted, transportFor } from './helpers.js';

const SCIENCE_PROMPT =
  'Answer with just A, B, C, or D.\n\nWhat is the chemical symbol for gold?\nA) Ag\nB) Au\nC) Gd\nD) Gl';
const solve = createSolver([{ stem: 'What is the chemical symbol for gold?', answerText: 'Au' }]);

function response(body: string, contentType = 'application/json', status = 200): HttpResponse {
  return { status, headers: { 'content-type': contentType }, contentType, body, url: 'http://x/v1/chat/completions' };
}

describe('chat completion extraction', () => {
  it('reads choices[0].message.content', () => {
    expect(extractCompletion(response(JSON.stringify({ choices: [{ message: { content: '95' } }] }))).text).toBe('95');
  });
  it('joins content given as an array of text parts', () => {
    const body = {
      choices: [
        {
          message: {
            content: [
              { type: 'text', text: '9' },
              { type: 'text', text: '5' },
            ],
          },
        },
      ],
    };
    expect(extractCompletion(response(JSON.stringify(body))).text).toBe('95');
  });
  it('promotes reasoning_content only when content is empty', () => {
    const empty = { choices: [{ message: { content: null, reasoning_content: '95' } }] };
    const r = extractCompletion(response(JSON.stringify(empty)));
    expect(r).toMatchObject({ text: '95', meta: { fromReasoning: true } });
    const both = { choices: [{ message: { content: '96', reasoning_content: '95' } }] };
    expect(extractCompletion(response(JSON.stringify(both))).text).toBe('96');
  });
  it('strips <think> blocks', () => {
    const body = { choices: [{ message: { content: '<think>37 + 58, carry the one</think>\n95' } }] };
    expect(extractCompletion(response(JSON.stringify(body))).text).toBe('95');
  });
  it('treats an error body sent with HTTP 200 as the agent failing', () => {
    const body = { error: { message: 'model overloaded', type: 'server_error' } };
    expect(() => extractCompletion(response(JSON.stringify(body)))).toThrow(
      expect.objectContaining({ kind: 'agent-error' }),
    );
    const limited = { error: { message: 'slow down', type: 'rate_limit_error' } };
    expect(() => extractCompletion(response(JSON.stringify(limited)))).toThrow(
      expect.objectContaining({ kind: 'rate-limited', transient: true }),
    );
  });
  it('shows terminal escapes and bidi overrides in an agent error escaped, on one line', () => {
    const body = { error: { message: 'over\u001b[2J\u001b]0;pwned\u0007loaded\u202e\nnow', type: 'server_error' } };
    expect(() => extractCompletion(response(JSON.stringify(body)))).toThrow(
      expect.objectContaining({
        kind: 'agent-error',
        message: 'agent error: over\\x1b[2J\\x1b]0;pwned\\x07loaded\\u202e now',
      }),
    );
  });
  it('refuses JSON without choices', () => {
    expect(() => extractCompletion(response('{"id":"x"}'))).toThrow(
      expect.objectContaining({ kind: 'protocol-error' }),
    );
  });
  it('reassembles a streamed reply sent although stream was false', () => {
    const sse = [
      'data: {"choices":[{"delta":{"content":"9"}}]}',
      'data: {"choices":[{"delta":{"content":"5"}}]}',
      'data: [DONE]',
      '',
    ].join('\n\n');
    expect(extractCompletion(response(sse, 'text/event-stream')).text).toBe('95');
  });
  it('classifies an HTML page as a protocol error', () => {
    expect(() => extractCompletion(response('<!DOCTYPE html><html></html>', 'text/html'))).toThrow(/HTML/);
  });
  it('builds the chat completions URL from a base, a /v1 base or the full path', () => {
    expect(chatCompletionsUrl('http://h:1')).toBe('http://h:1/v1/chat/completions');
    expect(chatCompletionsUrl('http://h:1/v1/')).toBe('http://h:1/v1/chat/completions');
    expect(chatCompletionsUrl('http://h:1/api/v1/chat/completions')).toBe('http://h:1/api/v1/chat/completions');
  });
});

describe('openai transport against the sample agents', () => {
  const agents = new Map<OpenAiBehaviour, RunningServer>();
  let client: HttpClient;

  beforeAll(async () => {
    client = localClient();
    for (const behaviour of OPENAI_BEHAVIOURS) {
      agents.set(
        behaviour,
        await startOpenAiAgent({ behaviour, solve, slowMs: 5_000, hugeBytes: 2 * 1024 * 1024, flakyRetryAfterS: 1 }),
      );
    }
  });
  afterAll(async () => {
    await client.close();
    await Promise.all([...agents.values()].map((a) => a.close()));
  });

  const ask = (behaviour: OpenAiBehaviour, prompt = MATH_PROMPT, budgetMs = 5_000) =>
    transportFor(client, 'openai', agents.get(behaviour)!.origin).ask(prompt, { budgetMs });

  it('perfect answers arithmetic and the science bank', async () => {
    expect(await ask('perfect')).toMatchObject({ ok: true, text: '95', meta: { model: 'sample-perfect' } });
    expect(await ask('perfect', SCIENCE_PROMPT)).toMatchObject({ ok: true, text: 'B' });
  });

  it('verbose wraps the answer in prose and markdown', async () => {
    expect(await ask('verbose')).toMatchObject({ ok: true, text: 'The answer is **95**.' });
  });

  it('wrong answers wrongly', async () => {
    expect(await ask('wrong')).toMatchObject({ ok: true, text: '96' });
    expect(await ask('wrong', SCIENCE_PROMPT)).toMatchObject({ ok: true, text: 'C' });
  });

  it('slow runs out of the budget', async () => {
    const r = await ask('slow', MATH_PROMPT, 300);
    expect(r).toMatchObject({ ok: false, kind: 'timeout', transient: false });
  });

  it('flaky answers 429 with Retry-After first, then answers', async () => {
    const prompt = `${MATH_PROMPT} `;
    expect(await ask('flaky', prompt)).toMatchObject({
      ok: false,
      kind: 'rate-limited',
      httpStatus: 429,
      retryAfterMs: 1000,
      transient: true,
    });
    expect(await ask('flaky', prompt)).toMatchObject({ ok: true, text: '95' });
  });

  it('garbage answers an HTML page: a protocol error; its probe sees a 500', async () => {
    expect(await ask('garbage')).toMatchObject({ ok: false, kind: 'protocol-error', transient: false });
    const probe = await transportFor(client, 'openai', agents.get('garbage')!.origin).probe({ budgetMs: 5_000 });
    expect(probe).toMatchObject({ reachable: false, httpStatus: 500 });
  });

  it('huge is cut off at the body cap', async () => {
    const r = await ask('huge');
    expect(r).toMatchObject({ ok: false, kind: 'too-large' });
    // The agent's server is still fine afterwards (the runner closed its socket, not the server).
    expect(await ask('perfect')).toMatchObject({ ok: true });
  });

  it('probes GET /v1/models', async () => {
    const probe = await transportFor(client, 'openai', agents.get('perfect')!.origin).probe({ budgetMs: 5_000 });
    expect(probe).toMatchObject({ reachable: true, httpStatus: 200 });
    expect(probe.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('refuses a closed port', async () => {
    const gone = await startOpenAiAgent({ behaviour: 'perfect', solve });
    await gone.close();
    expect(await transportFor(client, 'openai', gone.origin).ask(MATH_PROMPT, { budgetMs: 2_000 })).toMatchObject({
      ok: false,
      kind: 'refused',
    });
  });
});

describe('HTTP status handling', () => {
  it.each([
    [401, 'auth-required', false],
    [402, 'auth-required', false],
    [404, 'http-error', false],
    [500, 'http-error', false],
    [502, 'http-error', true],
    [503, 'http-error', true],
  ] as const)('HTTP %i → %s (transient %s)', async (status, kind, transient) => {
    const server = await scripted((_req, res) => json(res, status, { error: { message: 'nope' } }));
    const client = localClient();
    try {
      const r = await transportFor(client, 'openai', server.origin).ask(MATH_PROMPT, { budgetMs: 2_000 });
      expect(r).toMatchObject({ ok: false, kind, httpStatus: status, transient });
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('a model list over the body cap still proves a live server to the probe', async () => {
    const big = {
      object: 'list',
      data: Array.from({ length: 5_000 }, (_, i) => ({ id: `model-${i}`, object: 'model' })),
    };
    const server = await scripted((_req, res) => json(res, 200, big));
    const client = localClient();
    try {
      expect(JSON.stringify(big).length).toBeGreaterThan(64 * 1024);
      expect(await transportFor(client, 'openai', server.origin).probe({ budgetMs: 2_000 })).toMatchObject({
        reachable: true,
        httpStatus: 200,
      });
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('sends the per-agent headers and the model name', async () => {
    const server = await scripted((_req, res) => json(res, 200, { choices: [{ message: { content: '95' } }] }));
    const client = localClient();
    try {
      const t = transportFor(client, 'openai', server.origin, { headers: { authorization: 'Bearer test-key' } });
      await t.ask(MATH_PROMPT, { budgetMs: 2_000 });
      const req = server.requests[0]!;
      expect(req.headers.authorization).toBe('Bearer test-key');
      expect(JSON.parse(req.body)).toMatchObject({
        model: 'default',
        stream: false,
        messages: [{ role: 'user', content: MATH_PROMPT }],
      });
    } finally {
      await client.close();
      await server.close();
    }
  });
});
