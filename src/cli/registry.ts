import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import { parseJsonOrLines } from '../core/json-lines.js';
import { ConfigError, UsageError, errorMessage } from '../core/errors.js';
import type { Hcs25Client } from '../client.js';
import { entityIdFlag, withClient } from './context.js';
import { action, globals, intOption, note, printJson, printLine } from './shared.js';
import { quoteInput } from '../config/secret.js';

type Kind = 'hcs-2' | 'hcs-10';

interface CreateFlags {
  kind: Kind;
  /** undefined unless --indexed / --no-indexed was given (commander sets no default when both exist). */
  indexed?: boolean;
  ttl?: number;
  submitKey?: boolean;
  adminKey?: boolean;
  metadataTopic?: string;
}

interface RegisterFlags {
  registry: string;
  record?: string;
  metadata?: string;
  account?: string;
  inbound?: string;
  name?: string;
  target?: string;
  memo?: string;
  kind?: Kind;
}

export function register(program: Command): void {
  const registry = program
    .command('registry')
    .description('create an HCS-2 or HCS-10 registry topic and register agents in it');

  registry
    .command('create')
    .description('create a registry topic (prints its id)')
    .requiredOption('--kind <kind>', 'hcs-2 | hcs-10', kindOption)
    .option('--indexed', 'HCS-2: every message counts (the default)')
    .option('--no-indexed', 'HCS-2: only the latest message counts')
    .option(
      '--ttl <seconds>',
      'cache TTL written into the memo (default 86400 for hcs-2, 60 for hcs-10)',
      intOption('--ttl', 1, 31_536_000),
    )
    .option('--submit-key', 'only the operator may write to the registry (default: anyone may)')
    .option('--admin-key', 'the operator may update or delete the topic')
    .option('--metadata-topic <id>', 'HCS-10: HCS-1 topic with the registry metadata')
    .action(
      action(async (flags: CreateFlags, cmd: Command) => {
        const g = globals(cmd);
        await withOperator(cmd, async (client) => {
          const { createRegistry } = await import('../discover/write.js');
          const { topicId, memo } = await createRegistry(await client.connect(), {
            kind: flags.kind,
            ...(flags.indexed !== undefined && { indexed: flags.indexed }),
            ...(flags.ttl !== undefined && { ttl: flags.ttl }),
            submitKey: flags.submitKey === true,
            adminKey: flags.adminKey === true,
            ...(flags.metadataTopic && { metadataTopicId: entityIdFlag('--metadata-topic', flags.metadataTopic) }),
          });
          if (g.json) printJson({ topicId, kind: flags.kind, memo });
          else {
            // Only the id on stdout, like `topic create`: REGISTRY=$(hcs25 registry create --kind hcs-2)
            printLine(topicId);
            note(`created ${flags.kind} registry ${topicId} (memo ${memo})`);
          }
        });
      }),
    );

  registry
    .command('register')
    .description(
      'list an agent in a registry: an agent record (HCS-2), a metadata reference (HCS-2) or an account (HCS-10)',
    )
    .requiredOption('-r, --registry <id>', 'registry topic')
    .option('--record <file>', 'HCS-2: an agent record JSON file (inline, or an HCS-1 file when over 1024 bytes)')
    .option('--metadata <uri>', 'HCS-2: metadata reference (hcs://1/…, https://…, data:…)')
    .option(
      '--account <id>',
      'HCS-10: the agent account (its HCS-11 profile describes it); HCS-2: an hcs-10 agent record',
    )
    .option('--inbound <id>', 'HCS-10: the agent inbound topic, written into the registration')
    .option('--name <name>', 'HCS-2 with --account: the record name (default: the account id)')
    .option('--target <id>', 'HCS-2: t_id of the entry (default: the HCS-1 file, else the registry itself)')
    .option('--memo <text>', 'the m field (at most 500 characters)')
    .option('--kind <kind>', 'skip the mirror lookup of the registry memo: hcs-2 | hcs-10', kindOption)
    .action(
      action(async (flags: RegisterFlags, cmd: Command) => {
        const g = globals(cmd);
        const sources = [flags.record, flags.metadata, flags.account].filter((v) => v !== undefined).length;
        if (sources !== 1) throw new UsageError('pass exactly one of --record, --metadata and --account');
        if (flags.memo !== undefined && flags.memo.length > 500)
          throw new UsageError('--memo is limited to 500 characters');
        const registryId = entityIdFlag('--registry', flags.registry);
        const entry = await entryFrom(flags);
        await withOperator(cmd, async (client) => {
          const { registerAgent, registryShape } = await import('../discover/write.js');
          const shape = flags.kind
            ? { kind: flags.kind, indexed: true }
            : await registryShape(registryId, client.mirror);
          const { sequenceNumber, transactionId } = await registerAgent(await client.connect(), {
            registryId,
            shape,
            entry,
            ...(flags.target && { targetTopicId: entityIdFlag('--target', flags.target) }),
            ...(flags.memo !== undefined && { memo: flags.memo }),
            onInscribe: () => {
              if (!g.json) note('the record is larger than one message; inscribing it as an HCS-1 file…');
            },
          });
          const out = { registry: registryId, kind: shape.kind, sequenceNumber, transactionId };
          if (g.json) printJson(out);
          else
            printLine(
              `registered in ${registryId} at #${sequenceNumber} (uid ${sequenceNumber}), transaction ${transactionId}`,
            );
        });
      }),
    );
}

function kindOption(value: string): Kind {
  if (value !== 'hcs-2' && value !== 'hcs-10')
    throw new UsageError(`--kind must be hcs-2 or hcs-10, got ${quoteInput(value)}`);
  return value;
}

async function entryFrom(flags: RegisterFlags): Promise<import('../discover/write.js').RegistryEntrySource> {
  if (flags.metadata !== undefined) return { metadata: flags.metadata };
  if (flags.account !== undefined) {
    return {
      account: entityIdFlag('--account', flags.account),
      ...(flags.inbound && { inboundTopicId: entityIdFlag('--inbound', flags.inbound) }),
      ...(flags.name && { name: flags.name }),
    };
  }
  let text: string;
  try {
    text = await readFile(flags.record!, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read agent record ${flags.record}: ${errorMessage(err)}`);
  }
  // One record, in any form hcs25 writes records: an object, a one-element list, or one JSON line (`hcs25 agents`).
  const data = parseJsonOrLines(
    text,
    (line, cause) =>
      new UsageError(`${flags.record} is neither JSON nor JSON lines: line ${line}: ${errorMessage(cause)}`, {
        hint: 'an agent record is one JSON object (JSON allows no trailing comma)',
      }),
  );
  const records = Array.isArray(data) ? data : [data];
  if (records.length !== 1) {
    throw new UsageError(`${flags.record} holds ${records.length} records; --record registers one`, {
      hint: 'register each record on its own (one file, or one line of `hcs25 agents`, per call)',
    });
  }
  return { record: records[0] };
}

/** Writing to a registry needs an operator: say so before anything is read. */
function withOperator(cmd: Command, fn: (client: Hcs25Client) => Promise<void>): Promise<void> {
  return withClient(cmd, {}, (client) => {
    if (!client.operator) {
      throw new ConfigError('writing to a registry needs an operator account', {
        hint: 'set HCS25_OPERATOR_ID and HCS25_OPERATOR_KEY (or HCS25_OPERATOR_KEY_FILE)',
      });
    }
    return fn(client);
  });
}
