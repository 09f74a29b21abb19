/**
 * What both HTTP paths of `hcs25 serve` (node:http, and the lean front for score lookups) answer alike: CORS headers,
 * `If-None-Match`, and the one-line error body.
 */
import type { ServerResponse } from 'node:http';

/** Response headers for a request from `origin`, or undefined when that origin may not read the API. */
export type CorsPolicy = (origin: string | undefined) => ReadonlyArray<readonly [string, string]> | undefined;

export function corsPolicy(origins: readonly string[]): CorsPolicy {
  const allowed = new Set(origins);
  const any = allowed.has('*');
  const anyHeaders = [['Access-Control-Allow-Origin', '*'], ['Access-Control-Expose-Headers', 'ETag']] as const;
  // Built once per allowed origin: a lookup from a browser allocates nothing for its CORS headers.
  const perOrigin = new Map(
    [...allowed].map((o) => [o, [['Access-Control-Allow-Origin', o], ['Vary', 'Origin'], ['Access-Control-Expose-Headers', 'ETag']] as const]),
  );
  return (origin) => (origin === undefined ? undefined : any ? anyHeaders : perOrigin.get(origin));
}

export function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim() === etag);
}

export function errorBody(code: string, message: string): Buffer {
  return Buffer.from(`${JSON.stringify({ error: { code, message } })}\n`);
}

/** An error answer on the node:http path (the HTTP server and the event streams). */
export function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = errorBody(code, message);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', body.length);
  res.setHeader('Cache-Control', 'no-store');
  res.writeHead(status);
  res.end(body);
}
