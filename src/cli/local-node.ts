import { existsSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { UsageError } from '../core/errors.js';
import { LOCAL_PORTS } from '../core/ports.js';
import {
  action,
  collect,
  exitCodeForStop,
  globals,
  intOption,
  note,
  printJson,
  printLine,
  stopSignal,
} from './shared.js';
import type { LocalNode, LocalNodeOptions } from '../localnode/index.js';
import { quoteInput } from '../config/secret.js';

/** A `--fault` flag: `busy:N`, `not-created:N`, `unavailable:N`, `<HAPI_STATUS>:N`, `drop:MS`; `kind@method:N` narrows it. */
export type FaultSpec =
  | { kind: 'precheck'; status: string; method: string; count: number }
  | { kind: 'grpc'; code: number; method: string; count: number }
  | { kind: 'drop'; everyMs: number };

const PRECHECK_ALIASES: Record<string, string> = {
  busy: 'BUSY',
  'not-created': 'PLATFORM_TRANSACTION_NOT_CREATED',
  'not-active': 'PLATFORM_NOT_ACTIVE',
};
const GRPC_ALIASES: Record<string, number> = {
  unavailable: 14,
  'resource-exhausted': 8,
  internal: 13,
  'deadline-exceeded': 4,
};

export function parseFaultSpec(spec: string): FaultSpec {
  const m = /^([A-Za-z_-]+)(?:@([\w./]+|\*))?:(\d+|inf|always)$/.exec(spec.trim());
  const usage = (): UsageError =>
    new UsageError(`--fault "${spec}" is not a fault spec`, {
      hint: 'use busy:N, not-created:N, unavailable:N, <HAPI_STATUS>:N or drop:MS, optionally kind@method:N (e.g. busy@submitMessage:3); N may be "always"',
    });
  if (!m) throw usage();
  const [, kind = '', method = '*', n = ''] = m;
  const count = n === 'inf' || n === 'always' ? Number.POSITIVE_INFINITY : Number(n);
  if (kind === 'drop') {
    if (!Number.isFinite(count) || count < 100)
      throw new UsageError(`--fault drop:MS needs an interval of at least 100 ms, got ${quoteInput(n)}`);
    return { kind: 'drop', everyMs: count };
  }
  if (count < 1) throw usage();
  const status = PRECHECK_ALIASES[kind] ?? (/^[A-Z][A-Z0-9_]+$/.test(kind) ? kind : undefined);
  if (status) return { kind: 'precheck', status, method, count };
  const code = GRPC_ALIASES[kind];
  if (code !== undefined) return { kind: 'grpc', code, method, count };
  throw usage();
}

interface Flags {
  port: number;
  mirrorGrpcPort: number;
  mirrorRestPort: number;
  host: string;
  mirrorLagMs?: number;
  consensusDelayMs?: number;
  stateDir?: string;
  accounts: number;
  nodes: number;
  fault?: string[];
  writeEnv?: string;
}

/**
 * The settings that point the other hcs25 commands at this node. Network `local` brings the genesis operator and
 * allows loopback agents; the variables only move its endpoints, so no key is ever written or needed here. A node
 * listening on every interface is reached on loopback: a wildcard address is not one to connect to.
 */
export function localNodeEnv(node: Pick<LocalNode, 'network' | 'ports' | 'mirrorRestUrl'>, host: string) {
  const wildcard = host === '0.0.0.0' || host === '::';
  const reach = (port: number | string): string => `${wildcard ? '127.0.0.1' : host}:${port}`;
  return {
    HCS25_NETWORK: 'local',
    HCS25_NODES: Object.entries(node.network)
      .map(
        ([address, account]) => `${wildcard ? reach(address.slice(address.lastIndexOf(':') + 1)) : address}=${account}`,
      )
      .join(','),
    HCS25_MIRROR_GRPC: reach(node.ports.mirrorGrpc),
    HCS25_MIRROR_REST_URL: wildcard ? `http://${reach(node.ports.mirrorRest)}` : node.mirrorRestUrl,
  };
}

function printEnv(env: Record<string, string>, standard: boolean, written: string | undefined): void {
  printLine(
    standard
      ? 'The other commands reach this node with no settings (network local, standard ports). Explicitly:'
      : 'Point the other commands at this node (paste into your shell; --write-env FILE writes them as a .env file):',
  );
  for (const [name, value] of Object.entries(env)) printLine(`  export ${name}=${value}`);
  if (written)
    printLine(`Written to ${written}: hcs25 --dotenv ${written} <command> reads it (./.env is read by default).`);
  printLine('');
}

const raw = (derHex: string): string => `0x${derHex.slice(-64)}`;

function printBanner(node: LocalNode, host: string, stateDir: string | undefined): void {
  printLine('hcs25 local node (embedded emulator, hiero-local-node compatible ports and keys)');
  for (const [address, account] of Object.entries(node.network))
    printLine(`  consensus gRPC   ${address}   node account ${account}`);
  printLine(`  mirror gRPC      ${host}:${node.ports.mirrorGrpc}`);
  printLine(`  mirror REST      ${node.mirrorRestUrl}/api/v1`);
  printLine(`  ledger           ${stateDir ? `persisted in ${stateDir}` : 'in memory (use --state-dir to keep it)'}`);
  printLine('');
  printLine('Operator (ED25519, DER private key)');
  printLine(`  ${node.operator.accountId} - ${node.operator.privateKey}`);
  printLine('');
  printLine('Accounts — published local-node test keys: never use them on a real network');
  const groups: Array<[string, LocalNode['accounts']]> = [
    ['ECDSA', node.accounts.filter((a) => a.type === 'ECDSA' && !a.evmAddress)],
    ['Alias ECDSA', node.accounts.filter((a) => a.evmAddress)],
    ['ED25519', node.accounts.filter((a) => a.type === 'ED25519')],
  ];
  for (const [title, list] of groups) {
    if (list.length === 0) continue;
    printLine(`  ${title}`);
    for (const a of list)
      printLine(
        `  | ${a.accountId} - ${a.evmAddress ? `${a.evmAddress} - ` : ''}${raw(a.privateKey)} - ${a.balanceHbar} ℏ |`,
      );
  }
  printLine('');
}

export function register(program: Command): void {
  program
    .command('local-node')
    .description(
      `run the embedded Hedera local-node emulator in the foreground (consensus gRPC ${LOCAL_PORTS.consensus}, ` +
        `mirror gRPC ${LOCAL_PORTS.mirrorGrpc}, mirror REST ${LOCAL_PORTS.mirrorRest})`,
    )
    .option(
      '--port <n>',
      'consensus gRPC port (0 = any free port)',
      intOption('--port', 0, 65535),
      LOCAL_PORTS.consensus,
    )
    .option(
      '--mirror-grpc-port <n>',
      'mirror gRPC port',
      intOption('--mirror-grpc-port', 0, 65535),
      LOCAL_PORTS.mirrorGrpc,
    )
    .option(
      '--mirror-rest-port <n>',
      'mirror REST port',
      intOption('--mirror-rest-port', 0, 65535),
      LOCAL_PORTS.mirrorRest,
    )
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option(
      '--mirror-lag-ms <n>',
      'the mirror sees a transaction this long after consensus (real mirrors: 2000-6000)',
      intOption('--mirror-lag-ms', 0, 600_000),
    )
    .option(
      '--consensus-delay-ms <n>',
      'receipts stay UNKNOWN this long after submit',
      intOption('--consensus-delay-ms', 0, 600_000),
    )
    .option('--state-dir <dir>', 'keep the ledger (accounts, topics, messages) in this directory across restarts')
    .option(
      '--nodes <n>',
      'consensus nodes 0.0.3, 0.0.4, … on one ledger, on ports --port + 1000·i (like hiero-local-node)',
      intOption('--nodes', 1, 32),
      1,
    )
    .option(
      '--accounts <n>',
      'pre-funded accounts of each kind (ECDSA, alias ECDSA, ED25519)',
      intOption('--accounts', 0, 1000),
      10,
    )
    .option('--write-env <file>', 'also write the settings that point other commands at this node to a new .env file')
    .option(
      '--fault <spec>',
      'inject faults: busy:N, not-created:N, unavailable:N, <HAPI_STATUS>:N, drop:MS; kind@method:N for one method (repeatable)',
      collect,
    )
    .action(
      action(async (flags: Flags, cmd: Command) => {
        const faults = (flags.fault ?? []).map(parseFaultSpec);
        if (flags.writeEnv && existsSync(flags.writeEnv))
          throw new UsageError(`--write-env ${quoteInput(flags.writeEnv)} already exists`, {
            hint: 'remove it or name a new file; hcs25 does not overwrite an env file',
          });
        const { startLocalNode } = await import('../localnode/index.js');
        const options: LocalNodeOptions = {
          ports: { consensus: flags.port, mirrorGrpc: flags.mirrorGrpcPort, mirrorRest: flags.mirrorRestPort },
          host: flags.host,
          accounts: flags.accounts,
          nodes: flags.nodes,
          quiet: true,
          ...(flags.mirrorLagMs !== undefined ? { mirrorLagMs: flags.mirrorLagMs } : {}),
          ...(flags.consensusDelayMs !== undefined ? { consensusDelayMs: flags.consensusDelayMs } : {}),
          ...(flags.stateDir ? { stateDir: flags.stateDir } : {}),
        };
        // Handlers go in before anything is printed: a supervisor may signal as soon as it sees the banner.
        const { stopped: stopRequested, dispose } = stopSignal();
        const node = await startLocalNode(options).catch((err: unknown) => {
          dispose();
          throw err;
        });
        const env = localNodeEnv(node, flags.host);
        if (flags.writeEnv) {
          const lines = Object.entries(env).map(([name, value]) => `${name}=${value}`);
          writeFileSync(flags.writeEnv, `# hcs25 local-node on ${flags.host}\n${lines.join('\n')}\n`, { flag: 'wx' });
        }
        const timers: NodeJS.Timeout[] = [];
        for (const f of faults) {
          if (f.kind === 'precheck') node.faults.injectPrecheck(f.method, f.status, f.count);
          else if (f.kind === 'grpc') node.faults.injectGrpcError(f.method, f.code, f.count);
          else timers.push(setInterval(() => node.faults.dropConnections(), f.everyMs));
        }
        if (globals(cmd).json) {
          printJson({
            ports: node.ports,
            network: node.network,
            host: flags.host,
            mirrorRestUrl: node.mirrorRestUrl,
            operator: node.operator,
            accounts: node.accounts,
            stateDir: flags.stateDir ?? null,
            env,
          });
        } else {
          printBanner(node, flags.host, flags.stateDir);
          const standard =
            flags.host === '127.0.0.1' &&
            node.ports.consensus === LOCAL_PORTS.consensus &&
            node.ports.mirrorGrpc === LOCAL_PORTS.mirrorGrpc &&
            node.ports.mirrorRest === LOCAL_PORTS.mirrorRest &&
            Object.keys(node.network).length === 1;
          printEnv(env, standard, flags.writeEnv);
        }
        note(`local node running${faults.length ? ` with ${faults.length} fault rule(s)` : ''}; Ctrl+C to stop`);
        const signal = await stopRequested;
        for (const t of timers) clearInterval(t);
        await node.stop();
        note('local node stopped');
        return exitCodeForStop(signal);
      }),
    );
}
