import type { IncomingMessage, ServerResponse } from 'node:http';
import { bareAnswer, wrongAnswer, type Solution } from './solver.js';
import { readBody, sendJson, sendText, startHttpServer, waitOrHangup, type RunningServer } from './server.js';

export const OPENAI_BEHAVIOURS = ['perfect', 'verbose', 'wrong', 'slow', 'flaky', 'garbage', 'huge'] as const;
export type OpenAiBehaviour = (typeof OPENAI_BEHAVIOURS)[number];

export interface OpenAiAgentOptions {
  behaviour: OpenAiBehaviour;
  solve: (prompt: string) => Solution;
  /** How long `slow` waits before answering (default 60 s: beyond the default 30 s budget). */
  slowMs?: number;
  /** Size of the `huge` reply (default 4 MiB). */
  hugeBytes?: number;
  /** Retry-After seconds `flaky` sends with its 429 (default 1). */
  flakyRetryAfterS?: number;
}

const FLAKY_MEMORY = 10_000;
const GARBAGE_PAGE =
  '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>';

function completion(model: string, content: string): unknown {
  return {
    id: `chatcmpl-${Math.random().toString(36).slice(2, 12)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 20, completion_tokens: 1, total_tokens: 21 },
  };
}

function lastUserPrompt(body: unknown): string {
  const messages = (body as { messages?: Array<{ role?: string; content?: unknown }> } | null)?.messages;
  if (!Array.isArray(messages)) return '';
  const user = [...messages].reverse().find((m) => m.role === 'user');
  return typeof user?.content === 'string' ? user.content : '';
}

/**
 * Prose around the answer. For a choice question it also names a rejected option, as chatty models do: the
 * seed's grader sees two letters and cannot tell which one is meant (unparseable), which is the point of
 * asking for "just A, B, C, or D".
 */
function verbose(solution: Solution): string {
  if (solution.kind === 'science') return `The answer is **${solution.letter}**, not ${wrongAnswer(solution)}.`;
  return `The answer is **${bareAnswer(solution)}**.`;
}

/** Streams a multi-megabyte completion without building it in memory; stops when the client hangs up. */
function sendHuge(req: IncomingMessage, res: ServerResponse, model: string, bytes: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write(
    `{"id":"chatcmpl-huge","object":"chat.completion","model":"${model}","choices":[{"index":0,"message":{"role":"assistant","content":"`,
  );
  const chunk = 'x'.repeat(64 * 1024);
  let sent = 0;
  let gone = false;
  req.socket.once('close', () => (gone = true));
  const pump = () => {
    while (!gone && sent < bytes) {
      sent += chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!gone) res.end('"},"finish_reason":"stop"}]}');
  };
  pump();
}

/** An OpenAI-compatible chat-completions server with one scripted behaviour. */
export async function startOpenAiAgent(options: OpenAiAgentOptions): Promise<RunningServer & { model: string }> {
  const { behaviour, solve } = options;
  const model = `sample-${behaviour}`;
  const seen = new Set<string>();

  const server = await startHttpServer((req, res) => {
    void handle(req, res).catch(() => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: 'internal error', type: 'server_error' } });
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!.replace(/\/+$/, '');
    if (req.method === 'GET' && path === '/v1/models') {
      if (behaviour === 'garbage') return sendText(res, 500, 'text/html', GARBAGE_PAGE);
      return sendJson(res, 200, { object: 'list', data: [{ id: model, object: 'model', owned_by: 'hcs25' }] });
    }
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      return sendJson(res, 404, {
        error: { message: `no route ${req.method} ${path}`, type: 'invalid_request_error' },
      });
    }
    let body: unknown;
    try {
      body = JSON.parse(await readBody(req));
    } catch {
      return sendJson(res, 400, { error: { message: 'body is not JSON', type: 'invalid_request_error' } });
    }
    const prompt = lastUserPrompt(body);
    const solution = solve(prompt);
    switch (behaviour) {
      case 'perfect':
        return sendJson(res, 200, completion(model, bareAnswer(solution)));
      case 'verbose':
        return sendJson(res, 200, completion(model, verbose(solution)));
      case 'wrong':
        return sendJson(res, 200, completion(model, wrongAnswer(solution)));
      case 'slow':
        if (await waitOrHangup(req, options.slowMs ?? 60_000))
          sendJson(res, 200, completion(model, bareAnswer(solution)));
        return;
      case 'flaky':
        // Rate-limits the first time it sees a prompt, answers the retry: the runner must wait and ask again.
        if (!seen.has(prompt)) {
          if (seen.size >= FLAKY_MEMORY) seen.clear();
          seen.add(prompt);
          return sendJson(
            res,
            429,
            { error: { message: 'Rate limit reached, retry later', type: 'rate_limit_error' } },
            { 'retry-after': String(options.flakyRetryAfterS ?? 1) },
          );
        }
        return sendJson(res, 200, completion(model, bareAnswer(solution)));
      case 'garbage':
        return sendText(res, 200, 'text/html', GARBAGE_PAGE);
      case 'huge':
        return sendHuge(req, res, model, options.hugeBytes ?? 4 * 1024 * 1024);
    }
  }

  return { ...server, model };
}
