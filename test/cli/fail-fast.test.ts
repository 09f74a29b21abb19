/**
 * Never hang, always one line: commands that need a node or a mirror say what was tried when nothing answers; bad
 * input is refused (exit 2) before any network call; Ctrl-C exits 130 and SIGTERM 0 for long-running commands.
 * Runs the installed form of the command, bin/hcs25 (built dist/ behind it).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentFleet, type AgentFleet } from '../../src/devtools/agents/index.js';
import { startLocalNode, type LocalNode } from '../../src/localnode/index.js';
import { createSignalTopic } from '../../src/publish/topic.js';
import { emulatorEnv } from '../support/cli.js';

const root = resolve(import.meta.dirname, '../..');
const bin = join(root, 'bin/hcs25');
const cwd = mkdtempSync(join(tmpdir(), 'hcs25-failfast-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
}

function hcs25(
  args: string[],
  env: Record<string, string> = {},
  onStderr?: (text: string, kill: (s: NodeJS.Signals) => void) => void,
): Promise<Result> {
  return new Promise((done) => {
    const child = spawn(bin, args, { cwd, env: { ...process.env, HCS25_STATE_DIR: join(cwd, 'state'), ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      onStderr?.(stderr, (s) => child.kill(s));
    });
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

// Each case is its own process: the cases of the first two groups run concurrently.
describe.concurrent('nothing running', () => {
  let dead: Record<string, string>;
  beforeAll(async () => {
    const port = await closedPort();
    dead = {
      HCS25_NETWORK: 'custom',
      HCS25_NODES: `127.0.0.1:${port}=0.0.3`,
      HCS25_MIRROR_GRPC: `127.0.0.1:${port}`,
      HCS25_MIRROR_REST_URL: `http://127.0.0.1:${port}`,
      HCS25_OPERATOR_ID: '0.0.2',
      HCS25_OPERATOR_KEY:
        '302e020100300506032b65700422042091132178e72057a1d7528025956fe39b0b847f200ab59b2fdd367017f3087137',
    };
  });

  it.each([[['topic', 'create']], [['registry', 'create', '--kind', 'hcs-2']], [['identity', 'create']]])(
    '%j fails at once, naming the node it tried and what to do',
    async (args) => {
      const r = await hcs25(args, dead);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /no consensus node of the custom network answered \(127\.0\.0\.1:\d+: connection refused\)/,
      );
      expect(r.stderr).toMatch(/hint: /);
      expect(r.stderr.trim().split('\n')).toHaveLength(2);
    },
  );

  it('a run finds out before evaluating anyone', async () => {
    const agents = join(cwd, 'agents.json');
    writeFileSync(agents, JSON.stringify([{ name: 'x', protocol: 'openai', endpoint: 'http://127.0.0.1:9/' }]));
    const r = await hcs25(['run', '--agents', agents, '--topic', '0.0.5'], dead);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no consensus node .* answered/);
    expect(r.stderr).not.toMatch(/evaluat/i);
  });

  it('commands that read the mirror node name it when it does not answer', async () => {
    const r = await hcs25(['signals', '--topic', '0.0.5'], dead);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^hcs25: mirror node request failed .*: connection refused$/m);
    // Each retry is said as it happens, not after a minute of silence.
    expect(r.stderr).toMatch(/connection refused; retrying in [\d.]+ s \(try 2 of 6\)/);
  });
});

describe.concurrent('bad input is refused before any network call (exit 2)', () => {
  // No network configured at all: anything that reached for one would fail differently.
  const none = {
    HCS25_NETWORK: 'custom',
    HCS25_NODES: '127.0.0.1:1=0.0.3',
    HCS25_MIRROR_REST_URL: 'http://127.0.0.1:1',
  };

  it.each([
    [['--dotenv', 'missing.env', 'signals', '--topic', '0.0.5'], /env file ".*" does not exist/],
    [['--dotenv', 'a-directory', 'signals', '--topic', '0.0.5'], /cannot read env file ".*": EISDIR/],
    [['reveal', '--run', '01JDX3V9W5Q8K6T2N4M7P1R0ZA', '--topic', '0.0.x'], /--topic must be an id like 0\.0\.1234/],
    [['reveal', '--run', 'yesterday'], /--run must be a run id/],
    [['run', '--agents', 'missing.json', '--topic', '0.0.5'], /--agents "missing\.json": no such file/],
    [['run', '--agents', 'a-directory', '--topic', '0.0.5'], /--agents "a-directory" is not a file/],
    [
      ['registry', 'register', '--registry', '0.0.5', '--record', 'missing.json'],
      /cannot read agent record missing\.json/,
    ],
    // The error is the first line: no progress note comes before it.
    [['discover', '--registry', 'hcs://2/0.0.x'], /^hcs25: registry must be a topic id like 0\.0\.1234/],
    [['scores', '--topic', '0.0.5', '--publisher', 'nobody'], /^hcs25: --publisher: must look like 0\.0\.1234/],
    [
      ['signals', '--topic', '0.0.5', '--since', '2026-12-01T00:00:00Z', '--until', '2026-11-01T00:00:00Z'],
      /^hcs25: --since "2026-12-01T00:00:00Z" is after --until "2026-11-01T00:00:00Z"/,
    ],
  ])('%j', async (args, message) => {
    mkdirSync(join(cwd, 'a-directory'), { recursive: true });
    const r = await hcs25(args, none);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/^node:/m);
    expect(r.code).toBe(2);
  });
});

describe('exit codes of long-running commands and of eval', () => {
  let node: LocalNode;
  let env: Record<string, string>;
  let fleet: AgentFleet;
  beforeAll(async () => {
    node = await startLocalNode({ ports: { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 }, quiet: true });
    env = emulatorEnv(node);
    fleet = await startAgentFleet({ include: ['perfect'] });
  });
  afterAll(async () => {
    await fleet.stop();
    await node.stop();
  });

  it('signals --follow exits 130 on Ctrl-C and 0 on SIGTERM', async () => {
    const client = node.client();
    const { topicId } = await createSignalTopic(client);
    client.close();
    for (const [signal, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 0],
    ] as const) {
      // One signal only: stderr arrives in chunks, and a second Ctrl-C is not the case under test.
      let sent = false;
      const r = await hcs25(['signals', '--topic', topicId, '--follow'], env, (text, kill) => {
        if (sent || !/warning: no publisher allow-list/.test(text)) return;
        sent = true;
        setTimeout(() => kill(signal), 300);
      });
      expect(r.code, r.stderr).toBe(code);
    }
  });

  it('eval exits 1 when the agent cannot be reached, 0 when it answers', async () => {
    const port = await closedPort();
    const down = await hcs25(
      [
        'eval',
        '--protocol',
        'openai',
        '--endpoint',
        `http://127.0.0.1:${port}/v1`,
        '--evals',
        'availability,math',
        '--budget-ms',
        '2000',
        '--allow-private-endpoints',
      ],
      env,
    );
    expect(down.code, down.stderr).toBe(1);
    expect(down.stdout).toMatch(/unreachable/);
    const perfect = fleet.agents[0]!;
    const up = await hcs25(
      [
        'eval',
        '--protocol',
        'openai',
        '--endpoint',
        'endpoint' in perfect ? perfect.endpoint : '',
        '--evals',
        'availability,math',
        '--allow-private-endpoints',
      ],
      env,
    );
    expect(up.code, up.stderr).toBe(0);
  });
});
