import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import { action, exitCodeForStop, intOption, note, printLine, stopSignal } from './shared.js';
import { stringifyForTerminal } from '../core/terminal.js';

interface AgentsFlags {
  only?: string;
  slowMs?: number;
  scienceBank?: string;
}

export function register(program: Command): void {
  program
    .command('agents')
    .description('start the sample agent fleet on 127.0.0.1 and print its agent records as JSON lines (Ctrl-C stops)')
    .option(
      '--only <names>',
      'comma-separated subset: perfect, verbose, wrong, slow, flaky, garbage, huge, a2a-calc, a2a-legacy, mcp-tools, plain-http',
    )
    .option(
      '--slow-ms <ms>',
      'how long the slow agent waits (default 60000, beyond the default budget)',
      intOption('--slow-ms', 0, 3_600_000),
    )
    .option('--science-bank <file>', 'the bank the perfect agents know (default: the bundled bank)')
    .action(
      action(async (flags: AgentsFlags) => {
        const [{ startAgentFleet, FLEET_AGENT_NAMES }, { loadScienceBank }] = await Promise.all([
          import('../devtools/agents/fleet.js'),
          import('../evaluate/science.js'),
        ]);
        const include = flags.only
          ?.split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        const unknown = include?.filter((n) => !(FLEET_AGENT_NAMES as readonly string[]).includes(n)) ?? [];
        if (unknown.length > 0)
          throw new UsageError(`unknown sample agent ${unknown.join(', ')}`, {
            hint: `choose from ${FLEET_AGENT_NAMES.join(', ')}`,
          });
        const fleet = await startAgentFleet({
          ...(include ? { include: include as (typeof FLEET_AGENT_NAMES)[number][] } : {}),
          ...(flags.slowMs === undefined ? {} : { slowMs: flags.slowMs }),
          scienceBank: loadScienceBank(flags.scienceBank),
        });
        // Handlers first: whoever reads the records may signal us as soon as they appear.
        const { stopped } = stopSignal();
        // One record per line: pipe-friendly (`hcs25 agents | head -3`) and valid --json output as it is.
        for (const record of fleet.agents) printLine(stringifyForTerminal(record));
        note(`${fleet.agents.length} sample agents on 127.0.0.1; Ctrl-C to stop`);
        const signal = await stopped;
        await fleet.stop();
        return exitCodeForStop(signal);
      }),
    );
}
