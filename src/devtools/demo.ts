/**
 * The whole job on the embedded local node, end to end, the way a user would do it against testnet:
 * start the emulator and the sample agents, create and fill an HCS-2 registry, create a signal topic,
 * discover → evaluate → publish, read the signals back from the mirror REST API as a consumer, score them,
 * and write the HTML report. Everything started here is stopped before it returns, on success, error or abort.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Hcs25Error } from '../core/errors.js';
import { loadConfig, localNetwork, type ResolvedConfig } from '../config/index.js';
import type { AgentRecord } from '../discover/agent-record.js';
import type { LocalNode } from '../localnode/index.js';
import type { Hcs25Client } from '../client.js';
import type { RunProgress, RunReport } from '../publish/report.js';
import type { ScoreReport } from '../score/scores.js';

export interface DemoOptions {
  /** Shorter budgets and fewer agents, for CI. */
  fast?: boolean;
  /** `standard` binds 50211/5600/5551 like hiero-local-node (falls back to free ports when taken); `ephemeral` never does. */
  ports?: 'standard' | 'ephemeral';
  /** Where to write the HTML report (default ./hcs25-report.html); `false` writes none. */
  htmlReport?: string | false;
  /** Include agents reached over HCS-10 (default true). */
  hcs10?: boolean;
  /** Keep the run journal here (default: a temporary directory, removed afterwards). */
  stateDir?: string;
  /**
   * At the end, keep the local node running and serve the demo's topic (`hcs25 serve`: API and live page, embedded
   * store in memory) until `signal` aborts. `port` defaults to 8025 (any free port when taken or with ephemeral ports).
   */
  serve?: { port?: number; onReady: (url: string) => void };
  signal?: AbortSignal;
  /** One line per step, for the terminal. */
  onStep?: (line: string) => void;
  onProgress?: (progress: RunProgress) => void;
}

export interface DemoResult {
  ports: LocalNode['ports'];
  registryTopicId: string;
  signalTopicId: string;
  /** The account that published the signals (the allow-list to serve them with). */
  publisher: string;
  agents: Array<{ name: string; protocol: string; listedAs: string }>;
  run: RunReport;
  scores: ScoreReport;
  table: string;
  rejected: number;
  htmlReport?: string;
  durationMs: number;
}

export class DemoError extends Hcs25Error {
  constructor(message: string, hint: string, cause?: unknown) {
    super('DEMO', message, { hint, cause });
    this.name = 'DemoError';
  }
}

const EVAL_BUDGET_MS = { normal: 4_000, fast: 2_000 };

export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const started = Date.now();
  // Each step begins with its line: that is where an abort (Ctrl-C) takes effect between steps.
  const step = (line: string): void => {
    options.signal?.throwIfAborted();
    options.onStep?.(line);
  };
  const fast = options.fast === true;
  const budgetMs = fast ? EVAL_BUDGET_MS.fast : EVAL_BUDGET_MS.normal;
  const cleanups: Array<() => Promise<void> | void> = [];

  const [{ startLocalNode }, { startAgentFleet }, { createHcs25Client }, actions] = await Promise.all([
    import('../localnode/index.js'),
    import('./agents/index.js'),
    import('../client.js'),
    import('../actions.js'),
  ]);
  try {
    step('Starting the embedded Hedera local node…');
    const node = await startNode(startLocalNode, options.ports ?? 'standard', step);
    cleanups.push(() => node.stop());
    step(
      `  consensus gRPC 127.0.0.1:${node.ports.consensus} · mirror gRPC :${node.ports.mirrorGrpc} · mirror REST ${node.mirrorRestUrl}`,
    );

    const stateDir = options.stateDir ?? mkdtempSync(join(tmpdir(), 'hcs25-demo-'));
    if (!options.stateDir) cleanups.push(() => rmSync(stateDir, { recursive: true, force: true }));
    const config: ResolvedConfig = {
      ...loadConfig({ env: {}, flags: { network: 'local' }, cwd: stateDir }),
      network: localNetwork('127.0.0.1', node.ports),
      stateDir,
      budgetMs,
      concurrency: 16,
      maxFeeHbar: 50,
    };
    const client = createHcs25Client(config);
    cleanups.push(() => client.close());

    step('Starting the sample agents (OpenAI-compatible, A2A, MCP, plain HTTP) on 127.0.0.1…');
    const fleet = await startAgentFleet({
      slowMs: budgetMs * 2,
      ...(fast
        ? {
            include: [
              'perfect',
              'verbose',
              'wrong',
              'slow',
              'flaky',
              'garbage',
              'huge',
              'a2a-calc',
              'mcp-tools',
              'plain-http',
            ],
          }
        : {}),
    });
    cleanups.push(() => fleet.stop());

    step('Creating an HCS-2 registry and listing the agents in it…');
    const registry = await fillRegistry(client, fleet.agents, node, options, cleanups, step);

    step('Creating the signal topic (format definition inscribed as an HCS-1 file, submit key = operator)…');
    const topic = await actions.createTopic(client, { submitKeyOperator: true });
    step(`  signal topic ${topic.topicId} (memo ${topic.memo})`);

    step(`Discover → evaluate → publish (budget ${budgetMs} ms per eval)…`);
    const run = await actions.runSignals(client, {
      source: { registry: registry.topicId },
      topic: topic.topicId,
      seed: 'hcs25-demo',
      // The emulator answers in milliseconds; on testnet an HCS-10 ask takes tens of seconds.
      hcs10: { budgetMs: fast ? 3_000 : 5_000 },
      ...(options.signal && { signal: options.signal }),
      ...(options.onProgress && { onProgress: options.onProgress }),
      // A temporary journal is removed when the demo ends: say so rather than print a path that will not exist.
      onNote: (line) =>
        options.onStep?.(
          `  ${options.stateDir ? line : line.replace(/\(journal [^)]*\)/, '(journal kept only for the demo; --state-dir DIR keeps it)')}`,
        ),
    });
    options.signal?.throwIfAborted();
    if (run.status !== 'complete') {
      throw new DemoError(
        `the run ended ${run.status}${run.error ? `: ${run.error.message}` : ''}`,
        run.error?.hint ?? 'run the demo again with HCS25_DEBUG=1',
      );
    }
    step(
      `  ${run.signals.published} signals published (${run.evals.correct} correct, ${run.evals.wrong} wrong, ${run.evals.failed} failed, ${run.evals.skipped} skipped)`,
    );

    step('Reading the signals back from the mirror REST API, as a consumer would…');
    const [{ renderScoreTable }, { renderHtmlReport }] = await Promise.all([
      import('../report/table.js'),
      import('../report/html-report.js'),
    ]);
    const publisher = client.requireOperator().accountId;
    await waitForSignals(client, topic.topicId, publisher, run.signals.published, options.signal);
    const labels = Object.fromEntries(run.list.map((l) => [l.subject, l.name]));
    const {
      report: scores,
      signals,
      rejected,
    } = await actions.scoreSignals(client, {
      topic: topic.topicId,
      publishers: [publisher],
      labels,
      keepSignals: true,
    });
    // A terminal's width, or none: a table written to a file or pipe keeps every column whole.
    const table = renderScoreTable(
      scores,
      process.stdout.isTTY && process.stdout.columns ? { width: process.stdout.columns } : {},
    );

    let htmlReport: string | undefined;
    if (options.htmlReport !== false) {
      htmlReport = resolve(options.htmlReport ?? 'hcs25-report.html');
      writeFileSync(htmlReport, renderHtmlReport(scores, signals ?? [], { network: 'local (embedded emulator)' }));
    }
    if (options.serve)
      await serveUntilAborted(
        client,
        topic.topicId,
        publisher,
        options.ports === 'ephemeral' ? 0 : options.serve.port,
        options,
      );
    return {
      ports: node.ports,
      registryTopicId: registry.topicId,
      signalTopicId: topic.topicId,
      publisher,
      agents: registry.listed,
      run,
      scores,
      table,
      rejected,
      ...(htmlReport && { htmlReport }),
      durationMs: Date.now() - started,
    };
  } finally {
    for (const cleanup of cleanups.reverse()) {
      try {
        await cleanup();
      } catch {
        // Best effort: one stuck server must not keep the others running.
      }
    }
  }
}

/** `demo --serve`: the demo's topic served live until the user stops the demo. */
async function serveUntilAborted(
  client: Hcs25Client,
  topic: string,
  publisher: string,
  port: number | undefined,
  options: DemoOptions,
): Promise<void> {
  const signal = options.signal;
  if (!signal) throw new DemoError('serving needs a way to stop', 'pass an AbortSignal with the serve option');
  const { startServer, DEFAULT_SERVE_PORT } = await import('../serve/serve-scores.js');
  const start = (p: number) =>
    startServer(client, {
      topics: [topic],
      publishers: [publisher],
      database: 'memory://',
      port: p,
      onNote: (line) => options.onStep?.(`  ${line}`),
    });
  let server: Awaited<ReturnType<typeof start>>;
  try {
    server = await start(port ?? DEFAULT_SERVE_PORT);
  } catch (err) {
    if ((err as { code?: string }).code !== 'PORT_IN_USE' || port === 0) throw err;
    options.onStep?.(`  port ${port ?? DEFAULT_SERVE_PORT} is taken; serving on a free port instead`);
    server = await start(0);
  }
  try {
    options.serve!.onReady(server.url);
    if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  } finally {
    await server.close();
  }
}

type StartLocalNode = typeof import('../localnode/index.js').startLocalNode;

async function startNode(
  start: StartLocalNode,
  ports: 'standard' | 'ephemeral',
  step: (line: string) => void,
): Promise<LocalNode> {
  const ephemeral = { consensus: 0, mirrorGrpc: 0, mirrorRest: 0 };
  if (ports === 'ephemeral') return start({ ports: ephemeral, quiet: true });
  try {
    return await start({ quiet: true });
  } catch (err) {
    if ((err as { code?: string }).code !== 'PORT_IN_USE' && !/in use|EADDRINUSE/i.test(String((err as Error).message)))
      throw err;
    step(
      '  the standard local-node ports are taken (is hiero-local-node or another hcs25 running?); using free ports instead',
    );
    return start({ ports: ephemeral, quiet: true });
  }
}

interface FilledRegistry {
  topicId: string;
  listed: Array<{ name: string; protocol: string; listedAs: string }>;
}

/**
 * Lists every agent the way real registries do: most as inline agent records, the A2A agent by its agent-card URL,
 * the MCP server by an HCS-11 profile inscribed as an HCS-1 file, and the HCS-10 agents by account.
 */
async function fillRegistry(
  client: Hcs25Client,
  records: AgentRecord[],
  node: LocalNode,
  options: DemoOptions,
  cleanups: Array<() => Promise<void> | void>,
  step: (line: string) => void,
): Promise<FilledRegistry> {
  const [{ createRegistry, registerAgent }, { inscribeHcs1 }] = await Promise.all([
    import('../discover/write.js'),
    import('../hedera/hcs1-write.js'),
  ]);
  const { topicId } = await createRegistry(client.sdk, { kind: 'hcs-2', indexed: true, submitKey: true });
  const shape = { kind: 'hcs-2' as const, indexed: true };
  const listed: FilledRegistry['listed'] = [];
  const entries: Array<{
    record: AgentRecord;
    entry: import('../discover/write.js').RegistryEntrySource;
    listedAs: string;
  }> = [];

  for (const record of records) {
    if (record.protocol === 'a2a' && record.name === 'a2a-calc' && 'endpoint' in record) {
      entries.push({
        record,
        entry: { metadata: new URL('/.well-known/agent-card.json', record.endpoint).toString() },
        listedAs: 'A2A agent card URL',
      });
    } else if (record.protocol === 'mcp' && 'endpoint' in record) {
      const profile = {
        version: '1.0',
        type: 2,
        display_name: record.name,
        mcpServer: { version: '2025-06-18', connectionInfo: { url: record.endpoint, transport: 'streamable-http' } },
      };
      const file = await inscribeHcs1(client.sdk, Buffer.from(JSON.stringify(profile)), {
        mimeType: 'application/json',
      });
      entries.push({ record, entry: { metadata: file.hrl }, listedAs: `HCS-11 profile (${file.hrl})` });
    } else {
      entries.push({ record, entry: { record }, listedAs: 'agent record' });
    }
  }

  if (options.hcs10 !== false) {
    step('Starting HCS-10 agents that answer over HCS itself…');
    const { startHcs10Fleet } = await import('./hcs10-agents.js');
    const fleet = await startHcs10Fleet({
      node,
      include: options.fast ? ['correct', 'silent'] : ['correct', 'silent', 'large'],
      pollMs: 100,
    });
    cleanups.push(() => fleet.stop());
    for (const record of fleet.agents)
      entries.push({ record, entry: { record }, listedAs: `HCS-10 account ${record.accountId}` });
  }

  for (const { record, entry, listedAs } of entries) {
    await registerAgent(client.sdk, { registryId: topicId, shape, entry });
    listed.push({ name: record.name, protocol: record.protocol, listedAs });
  }
  step(`  registry ${topicId}: ${listed.length} agents listed`);
  return { topicId, listed };
}

/** The mirror node trails consensus (on real networks by seconds): poll until every published signal is readable. */
async function waitForSignals(
  client: Hcs25Client,
  topic: string,
  publisher: string,
  expected: number,
  signal?: AbortSignal,
): Promise<void> {
  const { collectSignals } = await import('../read/read-signals.js');
  const deadline = Date.now() + 30_000;
  for (;;) {
    const read = await collectSignals(client, { topic, publishers: [publisher] });
    if (read.signals.length >= expected || Date.now() > deadline) return;
    signal?.throwIfAborted();
    await new Promise((r) => setTimeout(r, 250));
  }
}
