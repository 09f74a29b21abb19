import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A sample agent listening on 127.0.0.1. */
export interface RunningServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  close(): Promise<void>;
}

/** Listens on an ephemeral port of 127.0.0.1 (tests run side by side, so never a fixed port). */
export async function listen(server: Server, host = '127.0.0.1', port = 0): Promise<RunningServer> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  return {
    origin: `http://${host}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        // Slow and huge agents hold sockets open on purpose; cut them so stop() is prompt.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function startHttpServer(handler: RequestListener, host?: string): Promise<RunningServer> {
  return listen(createServer(handler), host);
}

/** Reads a request body up to `limit` bytes (sample agents only talk to our own runner and tests). */
export async function readBody(req: IncomingMessage, limit = 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw new Error('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

export function sendText(res: ServerResponse, status: number, contentType: string, text: string): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Resolves after `ms`, or early when the client hangs up (so a slow agent stops waiting for a gone caller). */
export function waitOrHangup(req: IncomingMessage, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      req.socket.off('close', onClose);
      resolve(true);
    }, ms);
    const onClose = () => {
      clearTimeout(timer);
      resolve(false);
    };
    req.socket.once('close', onClose);
  });
}
