/**
 * Terminal safety of the real CLI (dist/cli/main.js): escape, control and bidi characters that an agent or a registry
 * sends never reach the terminal raw; they are shown escaped (`\x1b`, `\u202e`), in text and --json output alike.
 * Needs `npx tsc -p tsconfig.build.json` first. Agents are local servers on 127.0.0.1.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TERMINAL_UNSAFE } from '../../src/core/terminal.js';
import { json, scripted } from '../evaluate/transports/helpers.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const main = resolve(root, 'dist/cli/main.js');

/** A hostile string: clear screen, retitle the window (OSC … BEL), 8-bit CSI, right-to-left override, zero-width space. */
const HOSTILE = '\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202eevil\u200b';
/** Raw characters a terminal would act on; a line feed between lines is fine. */
const RAW_UNSAFE = new RegExp(TERMINAL_UNSAFE.source.replace('\\u0000-\\u001f', '\\u0000-\\u0009\\u000b-\\u001f'), 'u');

function hcs25(args: string[], cwd: string): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [main, ...args],
      { cwd, encoding: 'utf8', env: { ...process.env, HCS25_NETWORK: 'local', NO_COLOR: '1' }, timeout: 30_000 },
      (err, stdout, stderr) => {
        done({ stdout, stderr, code: err ? Number((err as { code?: number }).code ?? 1) : 0 });
      },
    );
  });
}

function expectSafe(out: { stdout: string; stderr: string }): void {
  for (const [stream, text] of [
    ['stdout', out.stdout],
    ['stderr', out.stderr],
  ] as const) {
    const raw = RAW_UNSAFE.exec(text);
    expect(
      raw,
      `${stream} carries U+${raw?.[0].charCodeAt(0).toString(16).padStart(4, '0')}: ${JSON.stringify(text)}`,
    ).toBeNull();
  }
}

let dir: string;
let openai: Awaited<ReturnType<typeof scripted>>;
let a2a: Awaited<ReturnType<typeof scripted>>;
let failing: Awaited<ReturnType<typeof scripted>>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hcs25-term-'));
  // Answers every question with the hostile string around a number.
  openai = await scripted((req, res) => {
    if (req.url?.endsWith('/models')) return json(res, 200, { data: [{ id: `m${HOSTILE}` }] });
    json(res, 200, {
      model: `m${HOSTILE}`,
      choices: [{ message: { role: 'assistant', content: `${HOSTILE} 42 ${HOSTILE}\r\nB` }, finish_reason: 'stop' }],
    });
  });
  a2a = await scripted((req, res, body) => {
    if (req.url?.startsWith('/.well-known/')) {
      return json(res, 200, {
        name: `card${HOSTILE}`,
        url: `${a2a.origin}/rpc`,
        protocolVersion: '0.3.0',
        capabilities: {},
      });
    }
    const { id } = JSON.parse(body) as { id: string };
    json(res, 200, {
      jsonrpc: '2.0',
      id,
      result: {
        kind: 'message',
        role: 'agent',
        messageId: 'x',
        parts: [{ kind: 'text', text: `${HOSTILE}A${HOSTILE}` }],
      },
    });
  });
  // Fails with a hostile error message (an OpenAI-style error body).
  failing = await scripted((_req, res) =>
    json(res, 200, { error: { message: `bad ${HOSTILE} request`, type: `invalid${HOSTILE}` } }),
  );
  writeFileSync(
    join(dir, 'agents.json'),
    JSON.stringify([
      { name: `named${HOSTILE}`, protocol: 'openai', endpoint: `${openai.origin}/v1` },
      { name: `bad endpoint${HOSTILE}`, protocol: 'a2a', endpoint: `${a2a.origin}/${HOSTILE}` },
      { name: 'bad protocol', protocol: `nope${HOSTILE}` },
    ]),
  );
}, 30_000);

afterAll(async () => {
  await Promise.all([openai?.close(), a2a?.close(), failing?.close()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

// Each case is its own process against stateless servers: they run concurrently.
describe.concurrent.each([[[]], [['--json']]])('hcs25 %j', (extra: string[]) => {
  it("eval prints an OpenAI agent's hostile reply escaped", async () => {
    const out = await hcs25(
      [
        ...extra,
        'eval',
        '--protocol',
        'openai',
        '--endpoint',
        `${openai.origin}/v1`,
        '--evals',
        'availability,math,science',
        '--budget-ms',
        '5000',
      ],
      dir,
    );
    expectSafe(out);
    expect(out.stdout).toMatch(/\\(x1b|u001b)/);
    expect(out.stdout).toMatch(/\\u202e/);
  });

  it("eval prints an A2A agent's hostile reply and card name escaped", async () => {
    const out = await hcs25(
      [
        ...extra,
        'eval',
        '--protocol',
        'a2a',
        '--endpoint',
        `${a2a.origin}/`,
        '--evals',
        'availability,science',
        '--budget-ms',
        '5000',
      ],
      dir,
    );
    expectSafe(out);
    expect(out.stdout).toMatch(/\\u202e/);
  });

  it("eval prints an agent's hostile error message escaped", async () => {
    const out = await hcs25(
      [
        ...extra,
        'eval',
        '--protocol',
        'openai',
        '--endpoint',
        `${failing.origin}/v1`,
        '--evals',
        'math',
        '--budget-ms',
        '5000',
      ],
      dir,
    );
    expectSafe(out);
    expect(out.stdout).toMatch(/\\(x1b|u001b)/);
  });

  it('discover prints hostile agent names, endpoints and skip reasons escaped', async () => {
    const out = await hcs25([...extra, 'discover', '--agents', 'agents.json'], dir);
    expectSafe(out);
    expect(out.stdout).toContain('named');
  });

  it('a usage error that quotes a hostile flag value prints it escaped', async () => {
    const out = await hcs25(
      [...extra, 'eval', '--protocol', `openai${HOSTILE}`, '--endpoint', `${openai.origin}/v1`],
      dir,
    );
    expect(out.code).toBe(2);
    expectSafe(out);
  });
});
