import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isNonPublicAddress } from '../../../src/net/guard.js';
import { HttpClient } from '../../../src/net/http-client.js';
import { createTransport } from '../../../src/evaluate/transports/index.js';
import { startOpenAiAgent } from '../../../src/devtools/agents/openai-agent.js';
import { createSolver } from '../../../src/devtools/agents/solver.js';
import type { RunningServer } from '../../../src/devtools/agents/server.js';
import { MATH_PROMPT, agentFor, fakeNetwork, scripted } from './helpers.js';

describe('isNonPublicAddress', () => {
  it.each([
    '127.0.0.1',
    '127.9.9.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fd00:ec2::254',
    '::ffff:127.0.0.1',
    '::ffff:10.0.0.1',
    '::ffff:a9fe:a9fe',
    '::127.0.0.1',
    '::7f00:1',
    '64:ff9b:1::7f00:1',
    '64:ff9b::a00:1',
    '64:ff9b::10.0.0.1',
    '2002:c0a8:0101::1',
    '[::1]',
    'not-an-ip',
  ])('refuses %s', (ip) => {
    expect(isNonPublicAddress(ip)).toBe(true);
  });

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '172.32.0.1',
    '203.0.113.10',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
  ])('allows %s', (ip) => {
    expect(isNonPublicAddress(ip)).toBe(false);
  });
});

describe('address guard on redirects', () => {
  let target: RunningServer;
  let redirector: Awaited<ReturnType<typeof scripted>>;
  const network = () => fakeNetwork({ 'public.test': '203.0.113.10', 'internal.test': '10.0.0.7' });

  beforeAll(async () => {
    target = await startOpenAiAgent({ behaviour: 'perfect', solve: createSolver([]) });
    redirector = await scripted((req, res) => {
      const path = req.url ?? '/';
      const to = (host: string) => `http://${host}:${target.port}/v1/chat/completions`;
      if (path.startsWith('/loopback/')) res.writeHead(307, { location: to('127.0.0.1') }).end();
      else if (path.startsWith('/internal/')) res.writeHead(307, { location: to('internal.test') }).end();
      else if (path.startsWith('/public/')) res.writeHead(307, { location: to('public.test') }).end();
      else res.writeHead(404).end();
    });
  });
  afterAll(async () => {
    await redirector.close();
    await target.close();
  });

  async function ask(path: string, allowPrivateEndpoints: boolean) {
    const client = new HttpClient({ allowPrivateEndpoints, ...network() });
    try {
      const transport = createTransport(agentFor('openai', `http://public.test:${redirector.port}${path}`), { client });
      return await transport.ask(MATH_PROMPT, { budgetMs: 5000 });
    } finally {
      await client.close();
    }
  }

  it('follows a redirect from a public host to another public host', async () => {
    const result = await ask('/public/v1/chat/completions', false);
    expect(result).toMatchObject({ ok: true, text: '95' });
  });

  it('refuses a redirect to 127.0.0.1 when private endpoints are not allowed', async () => {
    const result = await ask('/loopback/v1/chat/completions', false);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.kind).toBe('refused');
      expect(result.transient).toBe(false);
      expect(result.message).toMatch(/non-public address 127\.0\.0\.1/);
    }
  });

  it('refuses a redirect to a name that resolves to a private address', async () => {
    const result = await ask('/internal/v1/chat/completions', false);
    expect(result).toMatchObject({ ok: false, kind: 'refused' });
    if (!result.ok) expect(result.message).toMatch(/internal\.test.*10\.0\.0\.7/);
  });

  it('follows the same redirect when private endpoints are allowed', async () => {
    const result = await ask('/loopback/v1/chat/completions', true);
    expect(result).toMatchObject({ ok: true, text: '95' });
  });

  it('refuses a private endpoint given directly', async () => {
    const client = new HttpClient({ allowPrivateEndpoints: false });
    const transport = createTransport(agentFor('openai', target.origin), { client });
    const result = await transport.ask(MATH_PROMPT, { budgetMs: 5000 });
    await client.close();
    // Refused by the guard, not by a closed port: the target is up and answers when private endpoints are allowed.
    expect(result).toMatchObject({
      ok: false,
      kind: 'refused',
      message: expect.stringContaining('non-public address 127.0.0.1'),
    });
  });
});
