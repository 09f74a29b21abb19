import type { Command } from 'commander';
import { UsageError } from '../errors.js';
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
        if (flags.submitKey && flags.submitKeyOperator) throw new UsageError('give --submit-key or --submit-key-operator, not both');
        const g = globals(cmd);
        const [{ loadConfig, requireOperator, explorerUrl }, { createClient, parsePrivateKey }, { createSignalTopic, parsePublicKey, isSignalTopicMemo }] = await Promise.all([
          import('../config/index.js'),
          import('../hedera/client.js'),
          import('../publisher/topic.js'),
        ]);
        const config = loadConfig({ flags: { network: g.network, config: g.config, envFile: g.envFile } });
        const operator = requireOperator(config);
        const submitKey = flags.submitKeyOperator ? parsePrivateKey(operator).publicKey : flags.submitKey ? parsePublicKey(flags.submitKey) : undefined;
        if (flags.memo !== undefined && !isSignalTopicMemo(flags.memo) && !g.json) {
          note(`warning: "${flags.memo}" is not an HCS-25 signal topic memo (hcs-25:0:{ttl}); consumers may not recognise the topic`);
        }
        const client = createClient(config, { grpcDeadlineMs: 5_000, requestTimeoutMs: 30_000 });
        try {
          const created = await createSignalTopic(client, { ...(flags.memo !== undefined ? { memo: flags.memo } : {}), ...(submitKey ? { submitKey } : {}) });
          const link = explorerUrl(config.network.ledger, 'topic', created.topicId);
          if (g.json) {
            printJson({ ...created, network: config.network.ledger, ...(link ? { explorer: link } : {}) });
          } else {
            printLine(created.topicId);
            note(`created signal topic ${created.topicId} on ${config.network.ledger} (memo ${created.memo}${created.submitKey ? ', submit key set' : ', anyone may submit'})${link ? `\n  ${link}` : ''}`);
          }
        } finally {
          client.close();
        }
      }),
    );
}
