import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import type { Agent } from '../core/agent.js';
import type { RegistryInfo } from '../discover/discover.js';
import type { SkippedEntry } from '../discover/skips.js';
import { inputFileFlag, withClient } from './context.js';
import { action, globals, intOption, note, printJson, printLine } from './shared.js';
import { quoteInput } from '../config/secret.js';

interface DiscoverFlags {
  registry?: string;
  agents?: string;
  kind?: 'hcs-2' | 'hcs-10';
  allowPrivateEndpoints?: boolean;
  maxMessages?: number;
  endpointHints: boolean;
}

export function register(program: Command): void {
  program
    .command('discover')
    .description('list the agents a registry (or an agents file) yields, and why any entry was skipped')
    .option('-r, --registry <id>', 'HCS-2 or HCS-10 registry topic (0.0.1234 or hcs://2/0.0.1234); env HCS25_REGISTRY')
    .option('--agents <file>', 'also read agents from a JSON list of agent records')
    .option(
      '--kind <kind>',
      'read a topic whose memo does not say what it is as this registry kind (hcs-2 | hcs-10)',
      (v: string) => {
        if (v !== 'hcs-2' && v !== 'hcs-10')
          throw new UsageError(`--kind must be hcs-2 or hcs-10, got ${quoteInput(v)}`);
        return v;
      },
    )
    .option(
      '--allow-private-endpoints',
      'fetch metadata from private/loopback addresses (default only on --network local)',
    )
    .option(
      '--max-messages <n>',
      'read at most this many registry messages',
      intOption('--max-messages', 1, 100_000_000),
    )
    .option('--no-endpoint-hints', 'reach HCS-10 agents over HCS-10 even when their profile names an HTTP endpoint')
    .action(
      action(async (flags: DiscoverFlags, cmd: Command) => {
        const g = globals(cmd);
        if (flags.agents) inputFileFlag('--agents', flags.agents);
        const { discoverAgents } = await import('../discover/discover-agents.js');
        const { parseRegistryId } = await import('../discover/discover.js');
        // --registry also accepts the hcs://2/ form, which the config schema does not: it is not passed to the config layer.
        const found = await withClient(
          cmd,
          { ...(flags.allowPrivateEndpoints && { allowPrivateEndpoints: true }) },
          async (client) => {
            const registry = flags.registry ?? client.config.registry;
            if (!registry && !flags.agents) {
              throw new UsageError('nothing to discover: pass --registry <topic id> or --agents <file>', {
                hint: 'e.g. hcs25 discover --registry 0.0.1234',
              });
            }
            // Checked before the note, so a bad id is the one line printed.
            if (registry && !g.json)
              note(`reading registry ${parseRegistryId(registry)} from ${client.network.mirrorRestUrl}…`);
            return discoverAgents(client, {
              ...(registry && { registry }),
              ...(flags.agents && { agentsFile: flags.agents }),
              ...(flags.kind && { kind: flags.kind }),
              ...(flags.maxMessages !== undefined && { maxMessages: flags.maxMessages }),
              preferEndpointHints: flags.endpointHints,
            });
          },
        );
        const { registry: info, agents, skipped } = found;
        if (g.json) {
          printJson({ ...(info !== undefined && { registry: info }), agents, skipped });
          return;
        }
        printHuman(info, agents, skipped);
      }),
    );
}

function printHuman(info: RegistryInfo | undefined, agents: Agent[], skipped: SkippedEntry[]): void {
  if (info) {
    const migrated = info.migratedTo ? `, migrated to ${info.migratedTo}` : '';
    printLine(
      `registry ${info.topicId} (${info.kind}, ${info.indexed ? 'indexed' : 'non-indexed'}, ttl ${info.ttl}s${migrated}): ${info.messages} messages`,
    );
  }
  printLine(`${agents.length} agent${agents.length === 1 ? '' : 's'}`);
  for (const a of agents) {
    const where = a.protocol === 'hcs-10' ? `inbound ${a.inboundTopicId} (account ${a.accountId})` : a.endpoint;
    printLine(
      `  ${a.registrySeq !== undefined ? `#${a.registrySeq}`.padEnd(7) : '       '}${a.name}  [${a.protocol}] ${where}`,
    );
    printLine(`         ${a.subject}`);
  }
  if (skipped.length > 0) {
    printLine(`${skipped.length} skipped`);
    for (const s of skipped) printLine(`  ${s.ref}  ${s.reason}`);
  }
}
