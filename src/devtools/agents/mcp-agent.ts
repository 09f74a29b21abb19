import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { Request, Response } from 'express';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { listen, type RunningServer } from './server.js';

function buildServer(): McpServer {
  const server = new McpServer({ name: 'hcs25-sample-tools', version: '0.1.0' });
  server.registerTool(
    'add',
    { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } },
    ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
  );
  server.registerTool(
    'multiply',
    { description: 'Multiplies two numbers', inputSchema: { a: z.number(), b: z.number() } },
    ({ a, b }) => ({ content: [{ type: 'text', text: String(a * b) }] }),
  );
  return server;
}

/**
 * An MCP server on the official SDK, streamable HTTP at `/mcp` with sessions (the shape most deployed servers
 * have). It has tools but no chat: the runner can only probe it.
 */
export async function startMcpAgent(): Promise<RunningServer & { endpoint: string }> {
  const app = createMcpExpressApp({ host: '127.0.0.1' });
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  app.post('/mcp', async (req: Request, res: Response) => {
    const sessionId = req.header('mcp-session-id');
    let transport = sessionId ? sessions.get(sessionId) : undefined;
    if (!transport) {
      if (sessionId || !isInitializeRequest(req.body)) {
        res
          .status(sessionId ? 404 : 400)
          .json({ jsonrpc: '2.0', error: { code: -32000, message: 'no valid session' }, id: null });
        return;
      }
      const created = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => void sessions.set(id, created),
      });
      created.onclose = () => {
        if (created.sessionId) sessions.delete(created.sessionId);
      };
      await buildServer().connect(created);
      transport = created;
    }
    await transport.handleRequest(req, res, req.body);
  });

  const bySession = async (req: Request, res: Response) => {
    const transport = sessions.get(req.header('mcp-session-id') ?? '');
    if (!transport) {
      res.status(404).send('unknown session');
      return;
    }
    await transport.handleRequest(req, res);
  };
  app.get('/mcp', bySession);
  app.delete('/mcp', bySession);

  const running = await listen(createServer(app));
  return {
    ...running,
    endpoint: `${running.origin}/mcp`,
    close: async () => {
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => undefined)));
      await running.close();
    },
  };
}
