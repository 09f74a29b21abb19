import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import { withClient } from './context.js';
import { action, globals, note, printJson, printLine } from './shared.js';

interface TopicCreateFlags {
  submitKey?: string;
  submitKeyOperator?: boolean;
  memo?: string;
}

export function register(program: Command): void {
  const topic = program.command('topic').description('signal topics');
  topic
    .command('create')
    .description('create an HCS-25 signal topic (memo hcs-25:0:86400) and print its id')
    .option('--submit-key <key>', 'public key (DER or raw ED25519 hex) that must sign every submission')
    .option('--submit-key-operator', "use the operator's public key as the submit key (only this operator can publish)")
    .option('--memo <memo>', 'topic memo (default hcs-25:0:86400)')
    .action(
      action(async (flags: TopicCreateFlags, cmd: Command) => {
        if (flags.submitKey && flags.submitKeyOperator)
          throw new UsageError('give --submit-key or --submit-key-operator, not both');
        const g = globals(cmd);
        const [{ explorerUrl }, { createTopic }, { isSignalTopicMemo }] = await Promise.all([
          import('../config/networks.js'),
          import('../publish/create-topic.js'),
          import('../publish/topic.js'),
        ]);
        await withClient(cmd, {}, async (client) => {
          client.requireOperator();
          if (flags.memo !== undefined && !isSignalTopicMemo(flags.memo) && !g.json) {
            note(
              `warning: "${flags.memo}" is not an HCS-25 signal topic memo (hcs-25:0:{ttl}); consumers may not recognise the topic`,
            );
          }
          const created = await createTopic(client, {
            ...(flags.memo !== undefined && { memo: flags.memo }),
            ...(flags.submitKey && { submitKey: flags.submitKey }),
            ...(flags.submitKeyOperator && { submitKeyOperator: true }),
          });
          const ledger = client.network.ledger;
          const link = explorerUrl(ledger, 'topic', created.topicId);
          if (g.json) {
            printJson({ ...created, network: ledger, ...(link ? { explorer: link } : {}) });
          } else {
            printLine(created.topicId);
            note(
              `created signal topic ${created.topicId} on ${ledger} (memo ${created.memo}${created.submitKey ? ', submit key set' : ', anyone may submit'})${link ? `\n  ${link}` : ''}`,
            );
          }
        });
      }),
    );
}
