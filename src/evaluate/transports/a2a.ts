import { randomUUID } from 'node:crypto';
import type { Agent } from '../../core/agent.js';
import type { AskOptions, AskResult, ProbeResult, Transport } from './types.js';
import { reachableByStatus, runAsk, runProbe, type TransportContext } from './base.js';
import { stripThinking } from './body.js';
import { oneLine } from '../../core/terminal.js';
import { TransportError, statusFailure, type Deadline } from '../../net/http-client.js';
import {
  INVALID_PARAMS,
  METHOD_NOT_FOUND,
  VERSION_NOT_SUPPORTED,
  RpcCallError,
  rpcBody,
  rpcResponses,
} from './jsonrpc.js';
import { resolveA2aTarget, type A2aDialect, type A2aTarget } from './a2a-card.js';
import { foldResults, isFinished, partsText, taskAnswer, type A2aReply, type A2aTask } from './a2a-extract.js';

const POLL_START_MS = 500;
const POLL_MAX_MS = 2_000;
/** Leave at least this much budget for one poll round trip, else report the timeout now. */
const POLL_MIN_REMAINING_MS = 100;

const METHODS: Record<A2aDialect, { send: string; get: string }> = {
  'v0.3': { send: 'message/send', get: 'tasks/get' },
  'v1.0': { send: 'SendMessage', get: 'GetTask' },
};

export interface A2aTransportOptions {
  /** Force one dialect (tests); `auto` (default) takes it from the card and falls back once on -32601. */
  dialect?: 'auto' | A2aDialect;
  /** Budget of the agent-card lookup inside an ask's budget, ms. Default 10 000. */
  cardTimeoutMs?: number;
}

function otherDialect(d: A2aDialect): A2aDialect {
  return d === 'v1.0' ? 'v0.3' : 'v1.0';
}

function sendParams(dialect: A2aDialect, prompt: string, tenant: string | undefined): unknown {
  const messageId = randomUUID();
  if (dialect === 'v0.3') {
    return {
      message: { kind: 'message', role: 'user', messageId, parts: [{ kind: 'text', text: prompt }] },
      configuration: { blocking: true },
    };
  }
  return {
    ...(tenant ? { tenant } : {}),
    message: { messageId, role: 'ROLE_USER', parts: [{ text: prompt, mediaType: 'text/plain' }] },
    configuration: { returnImmediately: false },
  };
}

/** -32601, -32009 (VersionNotSupported, v1.0), or -32602 naming the method: the server speaks the other dialect. */
function isDialectMismatch(err: RpcCallError): boolean {
  return (
    err.rpcCode === METHOD_NOT_FOUND ||
    err.rpcCode === VERSION_NOT_SUPPORTED ||
    (err.rpcCode === INVALID_PARAMS && /method/i.test(err.message))
  );
}

/**
 * A2A JSON-RPC in both wire dialects: card discovery on both well-known paths, one retry in the other dialect on
 * "method not found", SSE/NDJSON tolerated where JSON was asked for, bounded polling of unfinished tasks.
 */
export class A2aTransport implements Transport {
  readonly protocol = 'a2a' as const;
  readonly canAsk = true;
  private readonly endpoint: string;
  /** The card is fetched once per agent; a failed lookup is not cached so the next eval tries again. */
  private target: A2aTarget | undefined;
  private pending: Promise<A2aTarget> | undefined;
  private rpcId = 0;

  constructor(
    agent: Agent,
    private readonly ctx: TransportContext,
    private readonly options: A2aTransportOptions = {},
  ) {
    if (!agent.endpoint) throw new TransportError('protocol-error', 'a2a agent has no endpoint');
    this.endpoint = agent.endpoint;
  }

  /**
   * The probe and the evals of one agent start together; they share one card lookup. A caller that joined
   * someone else's lookup and saw it fail (that caller's budget may have run out) looks up once on its own.
   */
  private async resolve(deadline: Deadline): Promise<A2aTarget> {
    if (this.target) return this.target;
    const lookup = (d: Deadline) =>
      resolveA2aTarget(this.ctx.client, this.endpoint, this.ctx.secretHeaders, d, this.options.cardTimeoutMs).then(
        (target) => {
          const forced = this.options.dialect;
          this.target = forced && forced !== 'auto' ? { ...target, dialect: forced } : target;
          return this.target;
        },
      );
    if (this.pending) {
      try {
        return await this.pending;
      } catch {
        return lookup(deadline);
      }
    }
    const mine = lookup(deadline);
    this.pending = mine;
    try {
      return await mine;
    } finally {
      if (this.pending === mine) this.pending = undefined;
    }
  }

  ask(prompt: string, options: AskOptions): Promise<AskResult> {
    return runAsk(this.ctx, this.endpoint, options, async (deadline) => {
      const target = await this.resolve(deadline);
      const { reply, dialect } = await this.send(target, prompt, deadline);
      const meta: Record<string, unknown> = { dialect, rpcUrl: target.rpcUrl, card: target.cardUrl !== undefined };
      if (reply.type === 'message')
        return { text: stripThinking(partsText(reply.parts)), meta: { ...meta, result: 'message' } };
      const task = await this.pollUntilFinished(target, dialect, reply.task, deadline);
      return { text: stripThinking(taskOutcome(task)), meta: { ...meta, result: 'task', state: task.state } };
    });
  }

  /** Reachable when the agent card answers (or, with no card, the endpoint answers below 500). */
  probe(options: AskOptions): Promise<ProbeResult> {
    return runProbe(this.ctx, this.endpoint, options, async (deadline) => {
      const target = await this.resolve(deadline);
      if (target.cardUrl) {
        return { reachable: true, httpStatus: target.cardStatus ?? 200, reason: `agent card (${target.dialect})` };
      }
      // The reason's first word is the signal status's source (format/write.ts): a silent card path is a timeout.
      if (target.cardTimedOut) {
        const { url, budgetMs } = target.cardTimedOut;
        return {
          reachable: false,
          reason: `timeout: the agent card ${new URL(url).pathname} did not answer within ${budgetMs} ms`,
        };
      }
      if (target.cardStatus === undefined)
        return { reachable: false, reason: 'timeout: no answer on the agent card paths in time' };
      return reachableByStatus(target.cardStatus, 'no agent card; the server answers');
    });
  }

  private async send(
    target: A2aTarget,
    prompt: string,
    deadline: Deadline,
  ): Promise<{ reply: A2aReply; dialect: A2aDialect }> {
    const first = target.dialect;
    try {
      return { reply: await this.sendOnce(target, first, prompt, deadline), dialect: first };
    } catch (err) {
      if (
        !(err instanceof RpcCallError) ||
        !isDialectMismatch(err) ||
        this.options.dialect === 'v0.3' ||
        this.options.dialect === 'v1.0'
      ) {
        throw err;
      }
    }
    const second = otherDialect(first);
    try {
      const reply = await this.sendOnce(target, second, prompt, deadline);
      this.target = { ...target, dialect: second }; // remember what works for the next eval
      return { reply, dialect: second };
    } catch (err) {
      if (err instanceof RpcCallError && isDialectMismatch(err)) {
        throw new TransportError(
          'protocol-error',
          'the agent speaks neither message/send (v0.3) nor SendMessage (v1.0)',
          {
            ...(err.httpStatus === undefined ? {} : { httpStatus: err.httpStatus }),
          },
        );
      }
      throw err;
    }
  }

  private async call(
    target: A2aTarget,
    dialect: A2aDialect,
    method: string,
    params: unknown,
    deadline: Deadline,
  ): Promise<unknown[]> {
    const res = await this.ctx.client.request(target.rpcUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(dialect === 'v1.0' ? { 'a2a-version': '1.0' } : {}),
      },
      secretHeaders: this.ctx.secretHeaders,
      body: rpcBody(`eval-${++this.rpcId}`, method, params),
      deadline,
    });
    // Auth, payment and rate limits are decided by the status whatever the body says; other 4xx/5xx often carry
    // a JSON-RPC error body (-32601 on HTTP 400, say) that the dialect fallback needs to see.
    if ([401, 402, 403, 407, 429].includes(res.status)) throw statusFailure(res)!;
    let responses: ReturnType<typeof rpcResponses>;
    try {
      responses = rpcResponses(res, `a2a ${method}`);
    } catch (err) {
      throw statusFailure(res) ?? err;
    }
    const error = responses.find((r) => r.error)?.error;
    if (error) throw new RpcCallError(error, res.status);
    const failure = statusFailure(res);
    if (failure) throw failure;
    return responses.map((r) => r.result);
  }

  private async sendOnce(
    target: A2aTarget,
    dialect: A2aDialect,
    prompt: string,
    deadline: Deadline,
  ): Promise<A2aReply> {
    const results = await this.call(
      target,
      dialect,
      METHODS[dialect].send,
      sendParams(dialect, prompt, target.tenant),
      deadline,
    );
    const reply = foldResults(results);
    if (!reply) throw new TransportError('protocol-error', 'a2a reply is neither a Message nor a Task');
    return reply;
  }

  /** Blocking sends may still return `working`: poll tasks/get (GetTask) with backoff inside the budget. */
  private async pollUntilFinished(
    target: A2aTarget,
    dialect: A2aDialect,
    task: A2aTask,
    deadline: Deadline,
  ): Promise<A2aTask> {
    let current = task;
    let delay = POLL_START_MS;
    while (!isFinished(current.state)) {
      if (!current.id)
        throw new TransportError('protocol-error', `task is ${oneLine(current.state, 40)} and has no id to poll`);
      if (deadline.remaining() < delay + POLL_MIN_REMAINING_MS) {
        throw new TransportError(
          'timeout',
          `task still ${oneLine(current.state, 40)} when the ${deadline.budgetMs} ms budget ran out`,
        );
      }
      await deadline.sleep(delay);
      delay = Math.min(POLL_MAX_MS, Math.round(delay * 1.5));
      const params = {
        ...(dialect === 'v1.0' && target.tenant ? { tenant: target.tenant } : {}),
        id: current.id,
        historyLength: 10,
      };
      const folded = foldResults(await this.call(target, dialect, METHODS[dialect].get, params, deadline));
      if (folded?.type === 'task') current = { ...folded.task, id: folded.task.id ?? current.id };
    }
    return current;
  }
}

/** Maps a finished task to its answer text, or throws the failure its state means. */
function taskOutcome(task: A2aTask): string {
  const text = taskAnswer(task);
  switch (task.state) {
    case 'failed':
    case 'rejected':
    case 'canceled':
    case 'cancelled':
      throw new TransportError('agent-error', `task ${task.state}${text ? `: ${oneLine(text, 120)}` : ''}`);
    case 'auth-required':
      if (text === '')
        throw new TransportError('auth-required', 'the agent asked for authentication (task auth-required)');
      return text;
    default:
      return text;
  }
}
