import { z } from 'zod';
import type { Agent } from '../../core/agent.js';
import type { AskOptions, AskResult, ProbeResult, Transport } from './types.js';
import { reachableByStatus, runAsk, runProbe, type TransportContext } from './base.js';
import { decodeJsonMessages, looksLikeHtml, stripThinking } from './body.js';
import { oneLine } from '../../core/terminal.js';
import { TransportError, statusFailure, type HttpResponse } from '../../net/http-client.js';

const DEFAULT_MODEL = 'default';

const contentSchema = z.union([
  z.string(),
  z.null(),
  z.array(z.looseObject({ type: z.string().optional(), text: z.string().optional() })),
]);

const completionSchema = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        message: z
          .looseObject({
            content: contentSchema.optional(),
            reasoning_content: z.string().nullable().optional(),
            refusal: z.string().nullable().optional(),
          })
          .optional(),
        // Streaming chunks (when a server streams although we asked it not to).
        delta: z.looseObject({ content: z.string().nullable().optional() }).optional(),
        finish_reason: z.string().nullable().optional(),
      }),
    )
    .optional(),
  error: z
    .union([
      z.string(),
      z.looseObject({ message: z.string().optional(), type: z.string().optional(), code: z.unknown().optional() }),
    ])
    .optional(),
  model: z.string().optional(),
});
type Completion = z.infer<typeof completionSchema>;

/** `{base}/v1/chat/completions` whether the registry gave the base, the `/v1` base or the full path. */
export function chatCompletionsUrl(endpoint: string): string {
  const url = new URL(endpoint);
  const path = url.pathname.replace(/\/+$/, '');
  if (path.endsWith('/chat/completions')) return url.toString();
  url.pathname = path.endsWith('/v1') ? `${path}/chat/completions` : `${path}/v1/chat/completions`;
  return url.toString();
}

function modelsUrl(endpoint: string): string {
  return chatCompletionsUrl(endpoint).replace(/\/chat\/completions$/, '/models');
}

function contentText(content: z.infer<typeof contentSchema> | undefined): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p.text === 'string' ? p.text : '')).join('');
  return '';
}

function errorFailure(error: NonNullable<Completion['error']>, status: number): TransportError {
  const message = typeof error === 'string' ? error : (error.message ?? error.type ?? 'error');
  const type = typeof error === 'string' ? '' : (error.type ?? '');
  if (/rate_limit/i.test(type))
    return new TransportError('rate-limited', `agent error: ${oneLine(message)}`, {
      httpStatus: status,
      transient: true,
    });
  if (/auth|permission|insufficient_quota/i.test(type))
    return new TransportError('auth-required', `agent error: ${oneLine(message)}`, { httpStatus: status });
  return new TransportError('agent-error', `agent error: ${oneLine(message)}`, { httpStatus: status });
}

/** Answer text of a chat completion; tolerates the variants compatible servers produce. */
export function extractCompletion(res: HttpResponse): { text: string; meta: Record<string, unknown> } {
  const docs = decodeJsonMessages(res, 'chat completion');
  const parsed = docs.map((d) => completionSchema.safeParse(d));
  const completions = parsed.flatMap((p) => (p.success ? [p.data] : []));
  if (completions.length === 0)
    throw new TransportError('protocol-error', 'chat completion: unexpected JSON shape', { httpStatus: res.status });
  const withError = completions.find((c) => c.error !== undefined && !c.choices?.length);
  if (withError?.error !== undefined) throw errorFailure(withError.error, res.status);

  const meta: Record<string, unknown> = { httpStatus: res.status };
  const first = completions[0]!;
  if (first.model) meta.model = first.model;
  if (completions.length > 1 || completions[0]?.choices?.[0]?.delta) {
    // Streamed chunks: concatenate deltas.
    meta.streamed = true;
    const text = completions
      .map((c) => c.choices?.[0]?.delta?.content ?? contentText(c.choices?.[0]?.message?.content))
      .join('');
    return { text: stripThinking(text), meta };
  }
  const choice = first.choices?.[0];
  if (!choice?.message)
    throw new TransportError('protocol-error', 'chat completion without choices[0].message', {
      httpStatus: res.status,
    });
  if (choice.finish_reason) meta.finishReason = choice.finish_reason;
  let text = stripThinking(contentText(choice.message.content));
  if (
    text === '' &&
    typeof choice.message.reasoning_content === 'string' &&
    choice.message.reasoning_content.trim() !== ''
  ) {
    // DeepSeek-style servers leave content empty and put everything in reasoning_content.
    text = stripThinking(choice.message.reasoning_content);
    meta.fromReasoning = true;
  }
  if (text === '' && choice.message.refusal) meta.refusal = oneLine(choice.message.refusal);
  return { text, meta };
}

export class OpenAiTransport implements Transport {
  readonly protocol = 'openai' as const;
  readonly canAsk = true;
  private readonly url: string;

  constructor(
    private readonly agent: Agent,
    private readonly ctx: TransportContext,
  ) {
    if (!agent.endpoint) throw new TransportError('protocol-error', 'openai agent has no endpoint');
    this.url = chatCompletionsUrl(agent.endpoint);
  }

  ask(prompt: string, options: AskOptions): Promise<AskResult> {
    return runAsk(this.ctx, this.url, options, async (deadline) => {
      const res = await this.ctx.client.request(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        secretHeaders: this.ctx.secretHeaders,
        body: JSON.stringify({
          model: this.agent.model ?? DEFAULT_MODEL,
          messages: [{ role: 'user', content: prompt }],
          temperature: 0,
          max_tokens: 256,
          stream: false,
        }),
        deadline,
      });
      const failure = statusFailure(res);
      if (failure) throw failure;
      return extractCompletion(res);
    });
  }

  /** `GET /v1/models`: any answer below 500 that is not an HTML error page proves a live server. */
  probe(options: AskOptions): Promise<ProbeResult> {
    const url = modelsUrl(this.url);
    return runProbe(this.ctx, url, options, async (deadline) => {
      const res = await this.ctx.client.request(url, {
        method: 'GET',
        headers: { accept: 'application/json' },
        secretHeaders: this.ctx.secretHeaders,
        deadline,
        // A gateway's model list can run to megabytes; the probe needs only the status and the first bytes.
        truncateBody: true,
      });
      if (res.status < 300 && looksLikeHtml(res))
        return { reachable: false, httpStatus: res.status, reason: 'HTML page instead of an API' };
      return reachableByStatus(res.status, `GET /v1/models → ${res.status}`);
    });
  }
}
