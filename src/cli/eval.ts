import type { Command } from 'commander';
import { UsageError } from '../errors.js';
import type { AnyEvalResult, EvalKind } from '../evals/types.js';
import type { Agent, Protocol } from '../registry/types.js';
import { action, globals, intOption, note, printJson, printLine } from './shared.js';

const ASKABLE: readonly Protocol[] = ['a2a', 'openai', 'http', 'mcp', 'hcs-10'];
const KINDS: readonly EvalKind[] = ['availability', 'math', 'science'];

interface EvalFlags {
  endpoint?: string;
  account?: string;
  inbound?: string;
  hcs10BudgetMs?: number;
  protocol: string;
  evals: string;
  budgetMs?: number;
  seed?: string;
  allowPrivateEndpoints?: boolean;
  model?: string;
  subject?: string;
  grader?: string;
  scienceBank?: string;
}

function parseEvals(value: string): EvalKind[] {
  const kinds = value.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = kinds.filter((k) => !(KINDS as readonly string[]).includes(k));
  if (kinds.length === 0 || bad.length > 0) {
    throw new UsageError(`--evals takes a comma-separated list of ${KINDS.join(', ')}${bad.length ? `; unknown: ${bad.join(', ')}` : ''}`);
  }
  return [...new Set(kinds)] as EvalKind[];
}

function describe(r: AnyEvalResult): string {
  const ms = `${r.latencyMs} ms`.padStart(8);
  if (r.kind === 'availability') {
    const status = r.httpStatus === undefined ? '' : `  HTTP ${r.httpStatus}`;
    return `${'availability'.padEnd(13)}${(r.reachable ? 'reachable' : 'unreachable').padEnd(15)}${ms}${status}${r.reason ? `  ${r.reason}` : ''}`;
  }
  const parts = [`${r.kind.padEnd(13)}${r.outcome.padEnd(15)}${ms}`, `score ${r.score}`];
  if (r.answer !== null) parts.push(`answer ${r.answer}`);
  if (r.score === 100) parts.push(r.compliant ? 'compliant' : 'not compliant');
  if (r.reason) parts.push(r.reason);
  if (r.response !== null && !r.compliant) parts.push(`response ${JSON.stringify(r.response.length > 80 ? `${r.response.slice(0, 79)}…` : r.response)}`);
  return parts.join('  ');
}

export function register(program: Command): void {
  program
    .command('eval')
    .description('evaluate one agent and print the results (publishes nothing)')
    .requiredOption('--protocol <protocol>', `one of ${ASKABLE.join(', ')}`)
    .option('--endpoint <url>', 'the agent endpoint (A2A: base URL, card URL or JSON-RPC URL)')
    .option('--account <id>', 'hcs-10: the agent account (its HCS-11 profile names its inbound topic)')
    .option('--inbound <id>', 'hcs-10: the agent inbound topic (when it has no profile)')
    .option('--hcs10-budget-ms <ms>', 'hcs-10: time budget per ask (default 120000: each hop is a consensus transaction)', intOption('--hcs10-budget-ms', 1000, 600_000))
    .option('--evals <list>', `comma-separated: ${KINDS.join(', ')}`, KINDS.join(','))
    .option('--budget-ms <ms>', 'time budget per eval, retry included (env HCS25_BUDGET_MS; default 30000)', intOption('--budget-ms', 100, 600_000))
    .option('--seed <seed>', 'question seed (default: random); the same seed and subject ask the same questions')
    .option('--allow-private-endpoints', 'allow loopback/private addresses (default only on --network local)')
    .option('--model <name>', 'model name sent to OpenAI-compatible endpoints')
    .option('--subject <id>', 'subject id used to pick the questions (default: the endpoint)')
    .option('--grader <id>', 'first-token@1 (default) or last-answer@1')
    .option('--science-bank <file>', 'a private science bank (JSON, schemas/science-bank.schema.json)')
    .action(
      action(async (flags: EvalFlags, cmd: Command) => {
        const protocol = flags.protocol as Protocol;
        if (!ASKABLE.includes(protocol)) throw new UsageError(`--protocol must be one of ${ASKABLE.join(', ')}, got "${flags.protocol}"`);
        const evals = parseEvals(flags.evals);
        const target = await targetOf(protocol, flags);

        const [{ loadConfig }, { evaluateAgents }, { randomSeed }, { parseGraderId }, { loadScienceBank }, { createProgressBar }] = await Promise.all([
          import('../config/load.js'),
          import('../evals/runner.js'),
          import('../evals/rng.js'),
          import('../evals/graders.js'),
          import('../evals/science.js'),
          import('../evals/progress.js'),
        ]);
        const g = globals(cmd);
        const config = loadConfig({
          flags: {
            network: g.network,
            config: g.config,
            envFile: g.envFile,
            budgetMs: flags.budgetMs,
            ...(flags.allowPrivateEndpoints ? { allowPrivateEndpoints: true } : {}),
          },
        });
        const agent: Agent = { ...target, protocol, ...(flags.subject ? { subject: flags.subject } : {}), ...(flags.model ? { model: flags.model } : {}) };
        // HCS-10 agents are asked over HCS: that needs an operator, and the runner's own HCS-10 identity.
        const hcs10 = protocol === 'hcs-10' ? await hcs10Transport(config, flags.hcs10BudgetMs) : undefined;
        const seed = flags.seed ?? randomSeed();
        const grader = flags.grader === undefined ? undefined : parseGraderId(flags.grader);
        const scienceBank = evals.includes('science') ? loadScienceBank(flags.scienceBank) : undefined;

        const json = g.json === true;
        const bar = !json && process.stderr.isTTY ? createProgressBar(process.stderr) : undefined;
        const controller = new AbortController();
        const onSignal = () => controller.abort(new Error('interrupted'));
        process.once('SIGINT', onSignal);
        const results: AnyEvalResult[] = [];
        try {
          for await (const result of evaluateAgents([agent], {
            evals,
            budgetMs: config.budgetMs,
            concurrency: evals.length,
            seed,
            ...(grader ? { grader } : {}),
            ...(scienceBank ? { scienceBank } : {}),
            allowPrivateEndpoints: config.allowPrivateEndpoints,
            agentHeaders: config.agentHeaders,
            signal: controller.signal,
            ...(bar ? { onProgress: (p) => bar.update(p) } : {}),
            ...(hcs10 && { protocolTransports: { 'hcs-10': hcs10.transport } }),
          })) {
            results.push(result);
          }
        } finally {
          process.off('SIGINT', onSignal);
          bar?.finish();
          await hcs10?.close();
        }
        if (controller.signal.aborted) {
          note('hcs25: interrupted');
          return 1;
        }
        const order = (r: AnyEvalResult) => KINDS.indexOf(r.kind);
        results.sort((a, b) => order(a) - order(b));
        if (json) {
          printJson({ agent: { ...target, protocol, subject: agent.subject }, seed, budgetMs: config.budgetMs, results: results.map(({ agent: _a, ...r }) => r) });
          return;
        }
        printLine(`${protocol} agent ${target.name}  (seed ${seed}, budget ${hcs10 ? `${hcs10.budgetMs} ms per HCS-10 ask` : `${config.budgetMs} ms`})`);
        for (const r of results) printLine(`  ${describe(r)}`);
        if (!config.allowPrivateEndpoints && results.some((r) => r.reason?.includes('non-public address'))) {
          note('hint: the endpoint is on a private address; pass --allow-private-endpoints (or use --network local) to allow it');
        }
      }),
    );
}

/** Who to ask: an HTTP endpoint, or for HCS-10 an account and/or inbound topic. The subject defaults to these. */
async function targetOf(protocol: Protocol, flags: EvalFlags): Promise<Pick<Agent, 'subject' | 'name' | 'endpoint' | 'accountId' | 'inboundTopicId'>> {
  if (protocol === 'hcs-10') {
    const { isEntityId } = await import('../hedera/mirror-rest.js');
    for (const [flag, value] of [['--account', flags.account], ['--inbound', flags.inbound]] as const) {
      if (value !== undefined && !isEntityId(value)) throw new UsageError(`${flag} must be an id like 0.0.1234, got "${value.slice(0, 40)}"`);
    }
    if (!flags.account && !flags.inbound) throw new UsageError('an hcs-10 agent needs --account (or --inbound)');
    const id = flags.account ?? flags.inbound!;
    return { subject: id, name: id, ...(flags.account && { accountId: flags.account }), ...(flags.inbound && { inboundTopicId: flags.inbound }) };
  }
  const { isHttpUrl } = await import('../registry/agent-record.js');
  if (!flags.endpoint || !isHttpUrl(flags.endpoint)) throw new UsageError(`--endpoint must be an http(s) URL, got "${flags.endpoint ?? ''}"`);
  return { subject: flags.endpoint, name: new URL(flags.endpoint).host, endpoint: flags.endpoint };
}

async function hcs10Transport(config: import('../config/load.js').ResolvedConfig, budgetMs: number | undefined) {
  const [{ requireOperator }, { createClient }, { MirrorRestClient }, { ensureRunnerIdentity }, { createHcs10Transport, DEFAULT_HCS10_BUDGET_MS }] = await Promise.all([
    import('../config/load.js'),
    import('../hedera/client.js'),
    import('../hedera/mirror-rest.js'),
    import('../hcs10/identity.js'),
    import('../transports/hcs10.js'),
  ]);
  requireOperator(config);
  const client = createClient(config);
  const mirror = new MirrorRestClient({ baseUrl: config.network.mirrorRestUrl });
  try {
    const { identity } = await ensureRunnerIdentity({ client, stateDir: config.stateDir, network: config.network.ledger, onProgress: note });
    const options = { client, identity, mirror, ...(budgetMs !== undefined && { budgetMs }) };
    return {
      budgetMs: budgetMs ?? DEFAULT_HCS10_BUDGET_MS,
      transport: (agent: Agent) => createHcs10Transport(agent, options),
      close: async () => {
        client.close();
        await mirror.close();
      },
    };
  } catch (err) {
    client.close();
    await mirror.close();
    throw err;
  }
}
