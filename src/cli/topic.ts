import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import { entityIdFlag, withClient } from './context.js';
import { action, globals, note, printJson, printLine } from './shared.js';

interface TopicCreateFlags {
  submitKey?: string;
  submitKeyOperator?: boolean;
  memo?: string;
  /** `--schemas <hrl>` names a file; `--no-schemas` gives false. */
  schemas?: string | false;
}

export function register(program: Command): void {
  const topic = program.command('topic').description('signal topics');
  topic
    .command('create')
    .description(
      'create a signal topic whose memo (hcs25-tool/3 hcs://1/<file>) points to the format definition, inscribed as an HCS-1 file, and print its id',
    )
    .option('--submit-key <key>', 'public key (DER or raw ED25519 hex) that must sign every submission')
    .option('--submit-key-operator', "use the operator's public key as the submit key (only this operator can publish)")
    .option('--schemas <hrl>', 'name an existing format definition file (hcs://1/<id>) instead of inscribing a new one')
    .option('--no-schemas', 'inscribe no format definition (memo hcs25-tool/3)')
    .option('--memo <memo>', 'topic memo, taken as is (no definition file is inscribed)')
    .action(
      action(async (flags: TopicCreateFlags, cmd: Command) => {
        if (flags.submitKey && flags.submitKeyOperator)
          throw new UsageError('give --submit-key or --submit-key-operator, not both');
        const g = globals(cmd);
        const [{ explorerUrl }, { createTopic }, { checkTopicMemo, isSignalTopicMemo }, { formatHbar }] =
          await Promise.all([
            import('../config/networks.js'),
            import('../publish/create-topic.js'),
            import('../publish/topic.js'),
            import('../publish/fees.js'),
          ]);
        await withClient(cmd, {}, async (client) => {
          client.requireOperator();
          // A memo Hedera would refuse is the one error; a warning about its content would only add noise.
          if (flags.memo !== undefined) checkTopicMemo(flags.memo);
          if (flags.memo !== undefined && !isSignalTopicMemo(flags.memo) && !g.json) {
            note(
              `warning: "${flags.memo}" is not a signal topic memo (hcs25-tool/3 [hcs://1/<file>], or the old hcs-25:0:{ttl}); consumers may not recognise the topic`,
            );
          }
          const created = await createTopic(client, {
            ...(flags.memo !== undefined && { memo: flags.memo }),
            ...(flags.submitKey && { submitKey: flags.submitKey }),
            ...(flags.submitKeyOperator && { submitKeyOperator: true }),
            ...(typeof flags.schemas === 'string' && { schemaFile: flags.schemas }),
            ...(flags.schemas === false && { inscribeSchemas: false }),
          });
          const ledger = client.network.ledger;
          const link = explorerUrl(ledger, 'topic', created.topicId);
          if (g.json) {
            const { schemaFile, costTinybar, ...rest } = created;
            printJson({
              ...rest,
              ...(schemaFile && {
                schemaFile: {
                  ...schemaFile,
                  ...(schemaFile.costTinybar !== undefined && { costTinybar: schemaFile.costTinybar.toString() }),
                },
              }),
              ...(costTinybar !== undefined && { costTinybar: costTinybar.toString() }),
              network: ledger,
              ...(link ? { explorer: link } : {}),
            });
            return;
          }
          printLine(created.topicId);
          const file = created.schemaFile;
          if (file) {
            const cost = file.costTinybar === undefined ? '' : ` for ${formatHbar(file.costTinybar)}`;
            const names = file.schemas.length > 0 ? file.schemas.join(', ') : 'none';
            note(
              file.inscribed
                ? `schema file ${file.hrl}: inscribed in ${file.chunks} message${file.chunks === 1 ? '' : 's'}${cost} (schemas: ${names})`
                : `schema file ${file.hrl} (existing; schemas: ${names})`,
            );
          }
          const paid = created.costTinybar === undefined ? '' : `; paid ${formatHbar(created.costTinybar)} in all`;
          note(
            `created signal topic ${created.topicId} on ${ledger} (memo ${created.memo}${created.submitKey ? ', submit key set' : ', anyone may submit'})${paid}${link ? `\n  ${link}` : ''}`,
          );
        });
      }),
    );
  topic
    .command('describe')
    .description('say what a topic is: its format and schema file, who can publish, its messages by format')
    .argument('<topic-id>', 'the topic, e.g. 0.0.1234')
    .action(
      action(async (topicId: string, _flags: Record<string, never>, cmd: Command) => {
        const id = entityIdFlag('<topic-id>', topicId);
        const g = globals(cmd);
        const { describeTopic } = await import('../read/describe-topic.js');
        await withClient(cmd, {}, async (client) => {
          const d = await describeTopic(client, { topic: id });
          if (g.json) {
            printJson(d);
            return;
          }
          const rows: [string, string][] = [['memo', d.memo]];
          if (d.ttl !== undefined) rows.push(['ttl', `${d.ttl} s`]);
          const file = d.schemaFile;
          if (file) {
            rows.push(['schema file', `${file.hrl}${file.title ? `: ${file.title}` : ''}`]);
            if (file.problem) rows.push(['', `unusable: ${file.problem}`]);
            if (file.format && file.format !== d.format) rows.push(['', `defines ${file.format}, not ${d.format}`]);
            if (file.schemas) rows.push(['schemas', file.schemas.length > 0 ? file.schemas.join(', ') : 'none']);
            if (file.docs) rows.push(['docs', file.docs]);
          }
          rows.push([
            'submit key',
            d.submitKey ? `${d.submitKey} (only its holder can publish)` : 'none (anyone may publish)',
          ]);
          rows.push(['admin key', d.adminKey ?? 'none (nobody can change or delete the topic)']);
          if (d.deleted) rows.push(['deleted', 'yes']);
          if (d.created) rows.push(['created', d.created]);
          rows.push([
            'messages',
            `${d.messages.count}${d.messages.first ? ` (first ${d.messages.first}, last ${d.messages.last})` : ''}`,
          ]);
          if (d.sample.messages > 0) {
            const formats = Object.entries(d.sample.formats)
              .sort(([, a], [, b]) => b - a)
              .map(([f, n]) => `${f}: ${n}`)
              .join(', ');
            rows.push([`first ${d.sample.messages}`, formats]);
          }
          printLine(`topic ${d.topicId}: ${d.what}`);
          for (const [k, v] of rows) printLine(`  ${k.padEnd(12)} ${v}`);
        });
      }),
    );
}
