/**
 * A throwaway PostgreSQL server for tests, benchmarks and demos: initdb into a temp dir, `postgres` on a free 127.0.0.1 port (unix socket in the
 * temp dir), one database, stopped and removed after. Under root (initdb refuses it) it runs as the `postgres` user.
 * Binaries come from PATH or Debian's /usr/lib/postgresql/<ver>/bin (`.ci/run` installs them when missing).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hcs25Error } from '../core/errors.js';

export interface PostgresServer {
  /** postgres://… URL of the test database (trust auth, user `postgres`). */
  url: string;
  /** A URL for another database on the same server (created on demand). */
  database(name: string): Promise<string>;
  /** Stops the server (immediate shutdown) and removes its directory. */
  stop(): Promise<void>;
}

function binDir(): string | undefined {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  if (onPath) return undefined;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(join(root, v, 'bin', 'initdb'))) return join(root, v, 'bin');
  return undefined;
}

function bin(name: string): string {
  const dir = binDir();
  return dir ? join(dir, name) : name;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const asRoot = process.getuid?.() === 0;
/** argv run as the postgres user under root, as is otherwise. */
function argv(cmd: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
}

export async function startPostgres(): Promise<PostgresServer> {
  const dir = mkdtempSync(join(tmpdir(), 'hcs25-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    chmodSync(dir, 0o755);
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
  }
  const [initCmd, initArgs] = argv(bin('initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '--auth=trust',
    '--no-sync',
    '-E',
    'UTF8',
    '--locale=C',
  ]);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) throw new Hcs25Error('START_FAILED', `initdb failed: ${init.stderr || init.error?.message}`);
  const port = await freePort();
  const [cmd, args] = argv(bin('postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-h',
    '127.0.0.1',
    '-k',
    dir,
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=50',
    '-c',
    'shared_buffers=256MB',
  ]);
  const child: ChildProcess = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const base = `postgres://postgres@127.0.0.1:${port}`;
  const pg = (await import('pg')).default;
  const deadline = Date.now() + 30_000;
  // Throws (not an Hcs25Error): this is tooling, and a missing PostgreSQL is the developer's to install.
  for (;;) {
    const c = new pg.Client({ connectionString: `${base}/postgres` });
    try {
      await c.connect();
      await c.query('CREATE DATABASE hcs25');
      await c.end();
      break;
    } catch (err) {
      await c.end().catch(() => {});
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Hcs25Error('START_FAILED', `postgres did not start: ${String(err)}\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url: `${base}/hcs25`,
    async database(name) {
      const c = new pg.Client({ connectionString: `${base}/postgres` });
      await c.connect();
      await c.query(`CREATE DATABASE ${name}`);
      await c.end();
      return `${base}/${name}`;
    },
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        const [stopCmd, stopArgs] = argv(bin('pg_ctl'), ['stop', '-D', data, '-m', 'immediate']);
        spawnSync(stopCmd, stopArgs, { stdio: 'ignore' });
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function postgresUser(): { uid: number; gid: number } {
  const out = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim();
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim();
  if (!out) throw new Hcs25Error('START_FAILED', 'no postgres user to run the test server as (initdb refuses root)');
  return { uid: Number(out), gid: Number(gid) };
}
