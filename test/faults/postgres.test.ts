/**
 * PostgreSQL stopped in the middle of a stream of uploads and started again. A throwaway server
 * of its own (initdb into a temp folder, a free port) is stopped with `pg_ctl -m immediate` (as
 * a crash would) and started again; the machine's cluster is never touched. While it is down,
 * every request fails fast with 503 `database_unavailable`; the service does not exit; once it is
 * back, uploads succeed without a restart, and every package ever answered 201 is in the signed
 * index (apt-get update, gpgv).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdir, readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { buildDeb } from '../../harness/debs.js';
import { freePort } from '../../harness/net.js';
import { waitFor, waitUntilReady } from '../../harness/service.js';
import { makeTempDir } from '../helpers/tmp.js';
import { adminToken, call, startService, uploadFile, verifyAptRepository, waitUpToDate, type RunningService } from './support.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function postgresBin(): Promise<string | null> {
  try {
    const versions = (await readdir('/usr/lib/postgresql')).sort((a, b) => Number(b) - Number(a));
    return versions[0] ? join('/usr/lib/postgresql', versions[0], 'bin') : null;
  } catch {
    return null;
  }
}

/** A PostgreSQL server of this test's own, run as the `postgres` account when the test runs as root. */
async function throwawayPostgres(dir: string, bin: string) {
  const isRoot = process.getuid?.() === 0;
  const as = (cmd: string, args: string[]) => (isRoot ? run('runuser', ['-u', 'postgres', '--', cmd, ...args]) : run(cmd, args));
  const dataDir = join(dir, 'pgdata');
  const socketDir = join(dir, 'pgsock');
  await mkdir(socketDir, { recursive: true });
  if (isRoot) {
    // The postgres account must reach its folder inside this test's temp folder (mkdtemp makes 0700).
    await chmod(dirname(dir), 0o711);
    await run('chown', ['-R', 'postgres:postgres', dir]);
  }
  await as(join(bin, 'initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const options = `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off`;
  const start = () => as(join(bin, 'pg_ctl'), ['-D', dataDir, '-o', options, '-l', join(dir, 'postgres.log'), '-w', 'start']);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    /** Immediate shutdown: connections cut, no checkpoint, as after a crash. */
    crash: () => as(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop']),
    stop: () => as(join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'fast', '-w', 'stop']).catch(() => undefined),
  };
}

describe('PostgreSQL stopped mid-load and started again', () => {
  let work: { dir: string; cleanup: () => Promise<void> };
  let pg: Awaited<ReturnType<typeof throwawayPostgres>> | null = null;
  let service: RunningService | null = null;
  let bin: string | null = null;

  before(async () => {
    work = await makeTempDir('tollgate-pgfault-');
    bin = await postgresBin();
  });
  after(async () => {
    await service?.kill();
    await pg?.stop();
    await work?.cleanup();
  });

  it('answers 503 fast while it is down, keeps running, recovers without a restart and loses no package answered 201', async (t) => {
    if (!bin) return t.skip('PostgreSQL server binaries are not installed (/usr/lib/postgresql/*/bin)');
    pg = await throwawayPostgres(join(work.dir, 'pg'), bin);
    const dataDir = join(work.dir, 'data');
    service = await startService(dataDir, { DATABASE_URL: pg.url });
    const { base } = service;
    const token = await adminToken(base, dataDir);

    const count = 24;
    const debs = await Promise.all(Array.from({ length: count }, (_, i) => buildDeb(work.dir, { name: `pgload-${i}`, version: '1.0', compression: 'gzip' })));
    const answered201 = new Set<string>();
    const statuses = new Map<number, number>();
    const unavailable: number[] = [];
    const retry: number[] = [];
    let down = false;
    let crashed = false;
    let next = 0;
    let slowest503 = 0;

    const client = async () => {
      while (next < count) {
        const i = next++;
        const began = Date.now();
        const res = await uploadFile(base, token, debs[i]!).catch((error: unknown) => {
          throw new Error(`upload ${i}: ${String(error)}; the service exited: ${service!.exited()}\n${service!.output()}`);
        });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        if (res.status === 201) answered201.add(`pgload-${i}`);
        else if (res.status === 503) {
          assert.equal(res.body.code, 'database_unavailable', res.text);
          if (down) slowest503 = Math.max(slowest503, Date.now() - began);
          unavailable.push(i);
          retry.push(i);
        } else assert.fail(`upload ${i}: ${res.status} ${res.text}`);
        if (answered201.size >= 8 && !crashed) {
          crashed = true;
          down = true;
          await pg!.crash();
          // Reads fail fast too while it is down.
          const began2 = Date.now();
          const read = await call(base, token, 'GET', '/artifacts').catch((error: unknown) => {
            throw new Error(`read: ${String(error)}; the service exited: ${service!.exited()}\n${service!.output()}`);
          });
          assert.equal(read.status, 503, read.text);
          assert.equal(read.body.code, 'database_unavailable');
          assert.ok(Date.now() - began2 < 5000, 'a read waited for the database');
          assert.equal((await fetch(`${base}/health/ready`)).status, 503, '/health/ready while the database is down');
          setTimeout(() => {
            void pg!.start().then(() => {
              down = false;
            });
          }, 3000);
        }
        if (down) await sleep(100);
      }
    };
    await Promise.all([client(), client(), client(), client()]);
    assert.ok(crashed, 'the database was stopped mid-load');
    assert.ok(unavailable.length > 0, `no upload met the stopped database: ${JSON.stringify([...statuses])}`);
    assert.ok(slowest503 < 5000, `a 503 took ${slowest503} ms`);
    assert.equal(service.exited(), false, `the service exited:\n${service.output()}`);

    // Back without a restart: the ones refused are retried; each is new (201) or was stored just
    // before the connection died (200, the stored result), never lost or doubled.
    await waitFor(async () => !down, 'PostgreSQL started again');
    await waitUntilReady(base, 'ready once the database is back');
    for (const i of retry) {
      const res = await uploadFile(base, token, debs[i]!);
      assert.ok(res.status === 201 || res.status === 200, `retry of ${i}: ${res.status} ${res.text}`);
      answered201.add(`pgload-${i}`);
    }
    const all = new Set(Array.from({ length: count }, (_, i) => `pgload-${i}`));
    assert.deepEqual(answered201, all);
    await waitUpToDate(base, token).catch((error: unknown) => {
      throw new Error(`${(error as Error).message}\nthe service's log:\n${service!.output()}`);
    });
    const indexed = await verifyAptRepository(base, work.dir, 'jammy', all);
    assert.deepEqual(indexed, all, 'the index lists every package exactly as answered');
    const audit = await call(base, token, 'GET', '/audit/verify');
    assert.equal(audit.body.ok, true, audit.text);
    console.log(`postgres: ${count} uploads, ${unavailable.length} answered 503 while it was down (slowest ${slowest503} ms), statuses ${JSON.stringify([...statuses])}, 0 lost`);
  });
});
