import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import type { AnyEvalResult } from '../evaluate/types.js';
import { PROTOCOLS, type Agent, type Protocol } from '../core/agent.js';
import { DEFAULT_EVALS, parseEvalList } from '../evaluate/eval-list.js';
import { entityIdFlag, withClient } from './context.js';
import {
  EXIT_FAILURE,
  EXIT_INTERRUPTED,
  EXIT_OK,
  action,
  globals,
  intOption,
  note,
  printJson,
  printLine,
} from './shared.js';
import { quoteInput } from '../config/secret.js';
import { stringifyForTerminal } from '../core/terminal.js';

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
  if (r.response !== null && !r.compliant)
    parts.push(`response ${stringifyForTerminal(r.response.length > 80 ? `${r.response.slice(0, 79)}…` : r.response)}`);
  return parts.join('  ');
}

export function register(program: Command): void {
  program
    .command('eval')
    .description('evaluate one agent and print the results (publishes nothing)')
    .requiredOption('--protocol <protocol>', `one of ${PROTOCOLS.join(', ')}`)
    .option('--endpoint <url>', 'the agent endpoint (A2A: base URL, card URL or JSON-RPC URL)')
    .option('--account <id>', 'hcs-10: the agent account (its HCS-11 profile names its inbound topic)')
    .option('--inbound <id>', 'hcs-10: the agent inbound topic (when it has no profile)')
    .option(
      '--hcs10-budget-ms <ms>',
      'hcs-10: time budget per ask (default 120000: each hop is a consensus transaction)',
      intOption('--hcs10-budget-ms', 1000, 600_000),
    )
    .option('--evals <list>', `comma-separated: ${DEFAULT_EVALS.join(', ')}`, DEFAULT_EVALS.join(','))
    .option(
      '--budget-ms <ms>',
      'time budget per eval, retry included (env HCS25_BUDGET_MS; default 30000)',
      intOption('--budget-ms', 100, 600_000),
    )
    .option('--seed <seed>', 'question seed (default: random); the same seed and subject ask the same questions')
    .option('--allow-private-endpoints', 'allow loopback/private addresses (default only on --network local)')
    .option('--model <name>', 'model name sent to OpenAI-compatible endpoints')
    .option('--subject <id>', 'subject id used to pick the questions (default: the endpoint)')
    .option('--grader <id>', 'first-token@1 (default) or last-answer@1')
    .option('--science-bank <file>', 'a private science bank (JSON, schemas/science-bank.schema.json)')
    .action(
      action(async (flags: EvalFlags, cmd: Command) => {
        const protocol = flags.protocol as Protocol;
        if (!PROTOCOLS.includes(protocol))
          throw new UsageError(`--protocol must be one of ${PROTOCOLS.join(', ')}, got ${quoteInput(flags.protocol)}`);
        const evals = parseEvalList(flags.evals);
        const target = await targetOf(protocol, flags);

        const [
          { evaluateAgents },
          { randomSeed },
          { parseGraderId },
          { loadScienceBank },
          { createProgressBar },
          { DEFAULT_HCS10_BUDGET_MS },
        ] = await Promise.all([
          import('../evaluate/evaluate-agents.js'),
          import('../evaluate/rng.js'),
          import('../evaluate/graders.js'),
          import('../evaluate/science.js'),
          import('../evaluate/progress.js'),
          import('../evaluate/transports/hcs10.js'),
        ]);
        const g = globals(cmd);
        const agent: Agent = {
          ...target,
          protocol,
          ...(flags.subject ? { subject: flags.subject } : {}),
          ...(flags.model ? { model: flags.model } : {}),
        };
        const seed = flags.seed ?? randomSeed();
        const grader = flags.grader === undefined ? undefined : parseGraderId(flags.grader);
        const scienceBank = evals.includes('science') ? loadScienceBank(flags.scienceBank) : undefined;

        const json = g.json === true;
        const bar = !json && process.stderr.isTTY ? createProgressBar(process.stderr) : undefined;
        const controller = new AbortController();
        const onSignal = () => controller.abort(new Error('interrupted'));
        const results: AnyEvalResult[] = [];
        const configFlags = {
          budgetMs: flags.budgetMs,
          ...(flags.allowPrivateEndpoints ? { allowPrivateEndpoints: true } : {}),
        };
        const config = await withClient(cmd, configFlags, async (client) => {
          // HCS-10 agents are asked over HCS: that needs an operator, and the runner's own HCS-10 identity.
          if (protocol === 'hcs-10') client.requireOperator();
          process.once('SIGINT', onSignal);
          try {
            for await (const result of evaluateAgents(client, {
              agents: [agent],
              evals,
              concurrency: evals.length,
              seed,
              ...(grader ? { grader } : {}),
              ...(scienceBank ? { scienceBank } : {}),
              signal: controller.signal,
              ...(bar ? { onProgress: (p) => bar.update(p) } : {}),
              ...(flags.hcs10BudgetMs !== undefined && { hcs10: { budgetMs: flags.hcs10BudgetMs } }),
            })) {
              results.push(result);
            }
          } finally {
            process.off('SIGINT', onSignal);
            bar?.finish();
          }
          return client.config;
        });
        const hcs10BudgetMs = protocol === 'hcs-10' ? (flags.hcs10BudgetMs ?? DEFAULT_HCS10_BUDGET_MS) : undefined;
        if (controller.signal.aborted) {
          note('hcs25: interrupted');
          return EXIT_INTERRUPTED;
        }
        const order = (r: AnyEvalResult) => DEFAULT_EVALS.indexOf(r.kind);
        results.sort((a, b) => order(a) - order(b));
        // An agent that could not be reached (or never answered anything) is a failed evaluation: exit 1.
        const unreachable = results.some((r) => r.kind === 'availability' && !r.reachable);
        const nothingMeasured = results.every(
          (r) => r.kind !== 'availability' && (r.outcome === 'timeout' || r.outcome === 'error'),
        );
        const code = unreachable || nothingMeasured ? EXIT_FAILURE : EXIT_OK;
        if (json) {
          printJson({
            agent: { ...target, protocol, subject: agent.subject },
            seed,
            budgetMs: config.budgetMs,
            results: results.map(({ agent: _a, ...r }) => r),
          });
          return code;
        }
        printLine(
          `${protocol} agent ${target.name}  (seed ${seed}, budget ${hcs10BudgetMs !== undefined ? `${hcs10BudgetMs} ms per HCS-10 ask` : `${config.budgetMs} ms`})`,
        );
        for (const r of results) printLine(`  ${describe(r)}`);
        if (!config.allowPrivateEndpoints && results.some((r) => r.reason?.includes('non-public address'))) {
          note(
            'hint: the endpoint is on a private address; pass --allow-private-endpoints (or use --network local) to allow it',
          );
        }
        if (unreachable) note(`hcs25: the agent could not be reached over ${protocol}`);
        return code;
      }),
    );
}

/** Who to ask: an HTTP endpoint, or for HCS-10 an account and/or inbound topic. The subject defaults to these. */
async function targetOf(
  protocol: Protocol,
  flags: EvalFlags,
): Promise<Pick<Agent, 'subject' | 'name' | 'endpoint' | 'accountId' | 'inboundTopicId'>> {
  if (protocol === 'hcs-10') {
    for (const [flag, value] of [
      ['--account', flags.account],
      ['--inbound', flags.inbound],
    ] as const) {
      if (value !== undefined) entityIdFlag(flag, value);
    }
    if (!flags.account && !flags.inbound) throw new UsageError('an hcs-10 agent needs --account (or --inbound)');
    const id = flags.account ?? flags.inbound!;
    return {
      subject: id,
      name: id,
      ...(flags.account && { accountId: flags.account }),
      ...(flags.inbound && { inboundTopicId: flags.inbound }),
    };
  }
  const { isHttpUrl } = await import('../discover/agent-record.js');
  if (!flags.endpoint || !isHttpUrl(flags.endpoint))
    throw new UsageError(`--endpoint must be an http(s) URL, got ${quoteInput(flags.endpoint ?? '')}`);
  return { subject: flags.endpoint, name: new URL(flags.endpoint).host, endpoint: flags.endpoint };
}
