import { z } from 'zod';
import { decodeJsonMessages } from './body.js';
import { oneLine } from '../../core/terminal.js';
import { TransportError, type HttpResponse } from '../../net/http-client.js';

export const rpcErrorSchema = z.looseObject({
  code: z.number(),
  message: z.string().optional(),
  data: z.unknown().optional(),
});
export const rpcResponseSchema = z.looseObject({
  jsonrpc: z.literal('2.0').optional(),
  id: z.union([z.string(), z.number(), z.null()]).optional(),
  result: z.unknown().optional(),
  error: rpcErrorSchema.optional(),
});
export type RpcResponse = z.infer<typeof rpcResponseSchema>;
export type RpcError = z.infer<typeof rpcErrorSchema>;

export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
/** A2A v1.0 VersionNotSupportedError. */
export const VERSION_NOT_SUPPORTED = -32009;

/** Thrown when the agent answered with a JSON-RPC error object; carries the code so callers can fall back. */
export class RpcCallError extends TransportError {
  readonly rpcCode: number;
  constructor(error: RpcError, httpStatus: number) {
    super('agent-error', `JSON-RPC error ${error.code}: ${oneLine(error.message ?? '', 120)}`, { httpStatus });
    this.rpcCode = error.code;
  }
}

export function rpcBody(id: string | number, method: string, params?: unknown): string {
  return JSON.stringify(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params });
}

/**
 * The JSON-RPC responses in a reply (one for plain JSON, several for an SSE/NDJSON stream), keeping only those
 * that look like JSON-RPC responses. Throws `protocol-error` when there are none.
 */
export function rpcResponses(res: HttpResponse, what: string): RpcResponse[] {
  const out: RpcResponse[] = [];
  for (const doc of decodeJsonMessages(res, what)) {
    const parsed = rpcResponseSchema.safeParse(doc);
    if (parsed.success && (parsed.data.result !== undefined || parsed.data.error !== undefined)) out.push(parsed.data);
  }
  if (out.length === 0)
    throw new TransportError('protocol-error', `${what}: no JSON-RPC response in the reply`, {
      httpStatus: res.status,
    });
  return out;
}
