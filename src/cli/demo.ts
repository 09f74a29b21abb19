import type { Command } from 'commander';
import { Hcs25Error, UsageError } from '../core/errors.js';
import { LOCAL_PORTS } from '../core/ports.js';
import { action, globals, note, printJson, printLine } from './shared.js';

interface DemoFlags {
  fast?: boolean;
  ports: string;
  html: string | false;
  hcs10: boolean;
  stateDir?: string;
  serve?: boolean;
}

export function register(program: Command): void {
  program
    .command('demo')
    .description(
      'the whole job on the embedded local node: sample agents, registry, evaluation, signals on-chain, scores, HTML report',
    )
    .option('--fast', 'shorter budgets and fewer agents (what CI runs)')
    .option(
      '--ports <mode>',
      `standard (${LOCAL_PORTS.consensus}/${LOCAL_PORTS.mirrorGrpc}/${LOCAL_PORTS.mirrorRest}, like hiero-local-node) | ephemeral`,
      'standard',
    )
    .option('--html <file>', 'where to write the HTML report', 'hcs25-report.html')
    .option('--no-html', 'write no HTML report')
    .option('--no-hcs10', 'leave out the agents reached over HCS-10')
    .option('--state-dir <dir>', 'keep the run journal here (default: a temporary directory, removed afterwards)')
    .option(
      '--serve',
      'at the end, keep the local node running and serve the scores (API and live page, like hcs25 serve) until Ctrl-C',
    )
    .action(
      action(async (flags: DemoFlags, cmd: Command) => {
        const g = globals(cmd);
        if (flags.ports !== 'standard' && flags.ports !== 'ephemeral')
          throw new UsageError('--ports must be standard or ephemeral');
        const [{ runDemo }, { createProgressBar }] = await Promise.all([
          import('../devtools/demo.js'),
          import('../evaluate/progress.js'),
        ]);
        const interactive = !g.json && process.stderr.isTTY === true;
        const bar = interactive ? createProgressBar(process.stderr) : undefined;
        let barShown = false;
        const stop = new AbortController();
        const onSignal = () => {
          note('\nstopping: finishing in-flight submissions and shutting everything down…');
          stop.abort(new Hcs25Error('INTERRUPTED', 'interrupted: everything the demo started has been stopped'));
        };
        process.once('SIGINT', onSignal);
        process.once('SIGTERM', onSignal);
        try {
          const result = await runDemo({
            ...(flags.fast && { fast: true }),
            ports: flags.ports,
            htmlReport: flags.html,
            hcs10: flags.hcs10,
            ...(flags.stateDir && { stateDir: flags.stateDir }),
            ...(flags.serve && {
              serve: {
                onReady: (url: string) => {
                  if (barShown) bar?.finish();
                  barShown = false;
                  note(
                    `\nServing the demo's scores at ${url}/ (live page) · API ${url}/v1 · ${url}/openapi.json — Ctrl-C stops the demo`,
                  );
                },
              },
            }),
            signal: stop.signal,
            onStep: (line) => {
              if (barShown) {
                bar?.finish();
                barShown = false;
              }
              if (!g.json) note(line);
            },
            onProgress: (p) => {
              barShown = true;
              bar?.update(p.evals);
            },
          });
          if (barShown) bar?.finish();
          if (g.json) {
            printJson({
              registryTopicId: result.registryTopicId,
              signalTopicId: result.signalTopicId,
              agents: result.agents,
              run: result.run,
              scores: result.scores,
              htmlReport: result.htmlReport ?? null,
              durationMs: result.durationMs,
            });
            return;
          }
          printLine();
          printLine(result.table.trimEnd());
          printLine();
          printLine(
            `${result.run.signals.published} signals on topic ${result.signalTopicId}; read back ${result.scores.subjects.length} subjects from the mirror node${result.rejected ? ` (${result.rejected} messages rejected)` : ''}.`,
          );
          if (result.htmlReport) printLine(`HTML report: ${result.htmlReport}`);
          printLine(
            `Done in ${(result.durationMs / 1000).toFixed(1)} s. Everything the demo started has been stopped.`,
          );
          // Everything above lived in memory and is gone: the only hint that still works is to run it again, kept up.
          if (!flags.serve)
            printLine(
              'To see these scores served live (HTTP API and live page), run it again with: npm run demo -- --serve',
            );
          printLine('Next: point the same commands at Solo, hiero-local-node or testnet (see the README).');
        } finally {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
        }
      }),
    );
}
