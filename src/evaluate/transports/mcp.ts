import { z } from 'zod';
import type { Agent } from '../../core/agent.js';
import type { AskOptions, AskResult, ProbeResult, Transport } from './types.js';
import { runProbe, type TransportContext } from './base.js';
import { TransportError, statusFailure, type Deadline, type HttpResponse } from '../../net/http-client.js';
import { RpcCallError, rpcBody, rpcResponses } from './jsonrpc.js';

/** The legacy (session) revision nearly every deployed server speaks; servers negotiate down from it. */
const PROTOCOL_VERSION = '2025-06-18';
/** The stateless revision: no initialize, metadata on every request (digest §3). */
const MODERN_PROTOCOL_VERSION = '2026-07-28';
const CLIENT_INFO = { name: 'hcs25-eval', version: '0.1' };

const initializeResultSchema = z.looseObject({
  protocolVersion: z.string(),
  serverInfo: z.looseObject({ name: z.string().optional(), version: z.string().optional() }).optional(),
  capabilities: z.record(z.string(), z.unknown()).optional(),
});
const toolsResultSchema = z.looseObject({ tools: z.array(z.looseObject({ name: z.string() })) });

/**
 * MCP over streamable HTTP. MCP has no "ask the agent" operation, so this transport is an availability probe
 * only (initialize → notifications/initialized → tools/list); evals on MCP subjects are `skipped`, not scored 0.
 */
export class McpTransport implements Transport {
  readonly protocol = 'mcp' as const;
  readonly canAsk = false;
  private readonly url: string;

  constructor(
    agent: Agent,
    private readonly ctx: TransportContext,
  ) {
    if (!agent.endpoint) throw new TransportError('protocol-error', 'mcp agent has no endpoint');
    this.url = agent.endpoint;
  }

  ask(_prompt: string, _options: AskOptions): Promise<AskResult> {
    return Promise.resolve({
      ok: false,
      kind: 'protocol-error',
      message: 'MCP has no chat operation; evals on MCP agents are skipped',
      transient: false,
      latencyMs: 0,
    });
  }

  probe(options: AskOptions): Promise<ProbeResult> {
    return runProbe(this.ctx, this.url, options, async (deadline) => {
      let init: { result: z.infer<typeof initializeResultSchema>; sessionId?: string };
      try {
        init = await this.initialize(deadline);
      } catch (err) {
        // A stateless (2026-07-28) server rejects initialize; ask it the modern way before calling it down.
        if (!(err instanceof RpcCallError) && !(err instanceof TransportError && err.httpStatus === 400)) throw err;
        return this.discover(deadline);
      }
      const version: Record<string, string> = { 'mcp-protocol-version': init.result.protocolVersion };
      const headers: Record<string, string> = init.sessionId
        ? { ...version, 'mcp-session-id': init.sessionId }
        : version;
      await this.post(rpcNotification('notifications/initialized'), headers, deadline, false);
      const tools = await this.post(rpcBody(2, 'tools/list', {}), headers, deadline, true);
      const toolCount = tools ? toolsResultSchema.safeParse(tools).data?.tools.length : undefined;
      if (init.sessionId) await this.endSession(init.sessionId, version, deadline);
      const name = init.result.serverInfo?.name;
      return {
        reachable: true,
        httpStatus: 200,
        reason: `mcp ${init.result.protocolVersion}${name ? ` ${name}` : ''}, ${toolCount ?? '?'} tools`,
      };
    });
  }

  private async initialize(
    deadline: Deadline,
  ): Promise<{ result: z.infer<typeof initializeResultSchema>; sessionId?: string }> {
    const res = await this.send(
      rpcBody(1, 'initialize', { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: CLIENT_INFO }),
      {},
      deadline,
    );
    const failure = statusFailure(res);
    if (failure) throw failure;
    const replies = rpcResponses(res, 'mcp initialize');
    const reply = replies.find((r) => r.id === 1) ?? replies[0]!;
    if (reply.error) throw new RpcCallError(reply.error, res.status);
    const parsed = initializeResultSchema.safeParse(reply.result);
    if (!parsed.success)
      throw new TransportError('protocol-error', 'mcp initialize: result without protocolVersion', {
        httpStatus: res.status,
      });
    const sessionId = res.headers['mcp-session-id'];
    return sessionId ? { result: parsed.data, sessionId } : { result: parsed.data };
  }

  private async discover(deadline: Deadline): Promise<Omit<ProbeResult, 'latencyMs'>> {
    const meta = {
      'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL_VERSION,
      'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const res = await this.send(
      rpcBody(1, 'server/discover', { _meta: meta }),
      { 'mcp-protocol-version': MODERN_PROTOCOL_VERSION, 'mcp-method': 'server/discover' },
      deadline,
    );
    const failure = statusFailure(res);
    if (failure) throw failure;
    const reply = rpcResponses(res, 'mcp server/discover')[0]!;
    if (reply.error) throw new RpcCallError(reply.error, res.status);
    return { reachable: true, httpStatus: res.status, reason: `mcp ${MODERN_PROTOCOL_VERSION} (stateless)` };
  }

  /** POSTs one message; returns the `result` of a request, or undefined for a notification (202). */
  private async post(
    body: string,
    headers: Record<string, string>,
    deadline: Deadline,
    expectResult: boolean,
  ): Promise<unknown> {
    const res = await this.send(body, headers, deadline);
    const failure = statusFailure(res);
    if (failure) throw failure;
    if (!expectResult) return undefined;
    const reply = rpcResponses(res, 'mcp')[0]!;
    if (reply.error) throw new RpcCallError(reply.error, res.status);
    return reply.result;
  }

  private send(body: string, headers: Record<string, string>, deadline: Deadline): Promise<HttpResponse> {
    return this.ctx.client.request(this.url, {
      method: 'POST',
      // Without both media types many servers answer 406.
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      secretHeaders: this.ctx.secretHeaders,
      body,
      deadline,
    });
  }

  /** Best effort: a server may answer 405 (it does not support explicit termination); either way we are done. */
  private async endSession(sessionId: string, version: Record<string, string>, deadline: Deadline): Promise<void> {
    await this.ctx.client
      .request(this.url, {
        method: 'DELETE',
        headers: { 'mcp-session-id': sessionId, ...version },
        secretHeaders: this.ctx.secretHeaders,
        deadline,
      })
      .catch(() => undefined);
  }
}

function rpcNotification(method: string): string {
  return JSON.stringify({ jsonrpc: '2.0', method });
}
