import type { Agent } from '../../core/agent.js';
import type { AskOptions, AskResult, ProbeResult, Transport } from './types.js';
import { reachableByStatus, runAsk, runProbe, type TransportContext } from './base.js';
import { looksLikeHtml, stripThinking } from './body.js';
import { TransportError, statusFailure, type HttpResponse } from '../../net/http-client.js';

/** Field names plain-HTTP agents put their answer in, in the order we look for them. */
const ANSWER_FIELDS = ['response', 'reply', 'text', 'content', 'message', 'output'] as const;

export function extractPlainAnswer(res: HttpResponse): string {
  if (res.contentType === 'text/plain' || res.contentType === 'text/markdown') return stripThinking(res.body);
  if (looksLikeHtml(res))
    throw new TransportError('protocol-error', 'HTML page where an answer was expected', { httpStatus: res.status });
  let doc: unknown;
  try {
    doc = JSON.parse(res.body);
  } catch {
    throw new TransportError(
      'protocol-error',
      `response is neither text/plain nor JSON (${res.contentType || 'no content type'})`,
      {
        httpStatus: res.status,
      },
    );
  }
  if (typeof doc === 'string') return stripThinking(doc);
  if (doc !== null && typeof doc === 'object' && !Array.isArray(doc)) {
    const record = doc as Record<string, unknown>;
    for (const field of ANSWER_FIELDS) {
      const value = record[field];
      if (typeof value === 'string') return stripThinking(value);
    }
    if (typeof record.error === 'string' || (record.error !== null && typeof record.error === 'object')) {
      throw new TransportError('agent-error', 'agent returned an error object', { httpStatus: res.status });
    }
  }
  throw new TransportError('protocol-error', `JSON without a string field ${ANSWER_FIELDS.join('/')}`, {
    httpStatus: res.status,
  });
}

/** Plain HTTP: `POST endpoint {"message": prompt}`, answer as text/plain or a JSON string field. */
export class PlainHttpTransport implements Transport {
  readonly protocol = 'http' as const;
  readonly canAsk = true;
  private readonly url: string;

  constructor(
    agent: Agent,
    private readonly ctx: TransportContext,
  ) {
    if (!agent.endpoint) throw new TransportError('protocol-error', 'http agent has no endpoint');
    this.url = agent.endpoint;
  }

  ask(prompt: string, options: AskOptions): Promise<AskResult> {
    return runAsk(this.ctx, this.url, options, async (deadline) => {
      const res = await this.ctx.client.request(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/plain;q=0.9' },
        secretHeaders: this.ctx.secretHeaders,
        body: JSON.stringify({ message: prompt }),
        deadline,
      });
      const failure = statusFailure(res);
      if (failure) throw failure;
      return { text: extractPlainAnswer(res), meta: { httpStatus: res.status, contentType: res.contentType } };
    });
  }

  /** A GET on the endpoint: a POST-only agent answers 404/405, which still proves a live server. */
  probe(options: AskOptions): Promise<ProbeResult> {
    return runProbe(this.ctx, this.url, options, async (deadline) => {
      const res = await this.ctx.client.request(this.url, {
        method: 'GET',
        headers: { accept: 'application/json, text/plain;q=0.9' },
        secretHeaders: this.ctx.secretHeaders,
        deadline,
        truncateBody: true,
      });
      return reachableByStatus(res.status, `GET → ${res.status}`);
    });
  }
}
