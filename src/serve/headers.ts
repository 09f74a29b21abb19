/**
 * What every answer of `hcs25 serve` (the routes and the event streams) shares: CORS headers, `If-None-Match`, and
 * the one-line error body.
 */
import type { ServerResponse } from 'node:http';

/** Response headers for a request from `origin`, or undefined when that origin may not read the API. */
export type CorsPolicy = (origin: string | undefined) => ReadonlyArray<readonly [string, string]> | undefined;

export function corsPolicy(origins: readonly string[]): CorsPolicy {
  const allowed = new Set(origins);
  return (origin) => {
    if (origin === undefined) return undefined;
    if (allowed.has('*')) {
      return [
        ['Access-Control-Allow-Origin', '*'],
        ['Access-Control-Expose-Headers', 'ETag'],
      ];
    }
    if (!allowed.has(origin)) return undefined;
    return [
      ['Access-Control-Allow-Origin', origin],
      ['Vary', 'Origin'],
      ['Access-Control-Expose-Headers', 'ETag'],
    ];
  };
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
