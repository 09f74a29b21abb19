/**
 * What every answer of `hcs25 serve` (the routes and the event streams) shares: CORS headers, `If-None-Match`, and
 * the one-line error body.
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

/** An error answer: one JSON line, never cached. */
export function sendError(res: ServerResponse, status: number, code: string, message: string): void {
  const body = Buffer.from(`${JSON.stringify({ error: { code, message } })}\n`);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', body.length);
  res.setHeader('Cache-Control', 'no-store');
  res.writeHead(status);
  res.end(body);
}
