import type { Command } from 'commander';
import { Hcs25Error } from '../core/errors.js';
import { withClient } from './context.js';
import { action, globals, note, printJson, printLine } from './shared.js';

interface CreateFlags {
  name?: string;
  force?: boolean;
  replaceMemo?: boolean;
}

interface ShowFlags {
  check: boolean;
}

export function register(program: Command): void {
  const identity = program
    .command('identity')
    .description("the runner's HCS-10 identity: inbound/outbound topics and an HCS-11 profile on the operator account");

  identity
    .command('create')
    .description('make the operator account an HCS-10 agent (reuses the stored identity while it still holds)')
    .option('--name <name>', 'display name in the HCS-11 profile (default "hcs25 eval runner")')
    .option('--force', 'create new topics and a new profile even when the stored identity still holds')
    .option('--replace-memo', 'overwrite an account memo hcs25 did not write (e.g. another HCS-11 profile)')
    .action(
      action(async (flags: CreateFlags, cmd: Command) => {
        const g = globals(cmd);
        const { ensureRunnerIdentity, identityFile } = await import('../hcs10/identity.js');
        await withClient(cmd, {}, async (client) => {
          const { config } = client;
          const operator = client.requireOperator();
          const { identity: id, created } = await ensureRunnerIdentity({
            client: await client.connect(),
            stateDir: config.stateDir,
            network: config.network.ledger,
            ...(flags.name !== undefined && { displayName: flags.name }),
            ...(flags.force && { force: true }),
            ...(flags.replaceMemo && { replaceMemo: true }),
            onProgress: g.json ? undefined : note,
          });
          if (g.json) {
            printJson({ created, file: identityFile(config.stateDir), identity: id });
            return;
          }
          printLine(
            `${created ? 'created' : 'reusing'} the HCS-10 identity of ${operator.accountId} on ${config.network.ledger}`,
          );
          printIdentity(id);
          printLine(`stored in ${identityFile(config.stateDir)}`);
        });
      }),
    );

  identity
    .command('show')
    .description('print the stored HCS-10 identity of the operator account and check it still holds on the ledger')
    .option('--no-check', 'print only; do not query the network')
    .action(
      action(async (flags: ShowFlags, cmd: Command) => {
        const g = globals(cmd);
        const { loadIdentity, checkIdentity, identityFile } = await import('../hcs10/identity.js');
        const { id, check } = await withClient(cmd, {}, async (client) => {
          const { config } = client;
          const operator = client.requireOperator();
          const id = loadIdentity(config.stateDir, config.network.ledger, operator.accountId);
          if (!id) {
            throw new Hcs25Error(
              'NO_IDENTITY',
              `no HCS-10 identity is stored for ${operator.accountId} on ${config.network.ledger} (${identityFile(config.stateDir)})`,
              {
                hint: 'run `hcs25 identity create`',
              },
            );
          }
          return { id, check: flags.check ? await checkIdentity(await client.connect(), id) : undefined };
        });
        if (g.json) {
          printJson({ identity: id, ...(check && { check }) });
          return check?.ok === false ? 1 : 0;
        }
        printIdentity(id);
        if (check) {
          printLine(check.ok ? 'holds on the ledger: yes' : 'holds on the ledger: no');
          for (const p of check.problems) printLine(`  - ${p}`);
          if (!check.ok) note('hint: run `hcs25 identity create` to make a new one');
        }
        return check?.ok === false ? 1 : 0;
      }),
    );
}

function printIdentity(id: {
  accountId: string;
  inboundTopicId: string;
  outboundTopicId: string;
  profileTopicId: string;
  displayName: string;
}): void {
  printLine(`  account          ${id.accountId}`);
  printLine(`  name             ${id.displayName}`);
  printLine(`  operator_id      ${id.inboundTopicId}@${id.accountId}`);
  printLine(`  inbound topic    ${id.inboundTopicId}`);
  printLine(`  outbound topic   ${id.outboundTopicId}`);
  printLine(`  profile          hcs://1/${id.profileTopicId} (account memo hcs-11:hcs://1/${id.profileTopicId})`);
}
