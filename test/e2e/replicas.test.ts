/**
 * Two replicas of the service on one PostgreSQL database, one Redis and one shared DATA_DIR,
 * behind a real nginx that balances the API between them and serves /repo/ from the shared
 * folder: uploads from 8 clients all land once in one signed index, the audit chain verifies,
 * rate limits count across replicas, and a replica killed mid-load loses nothing answered 201.
 * Skipped without TEST_DATABASE_URL (PostgreSQL), Redis or nginx.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildDeb } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { freePort } from '../../harness/net.js';
import { loginAsInitialAdmin, spawnService, waitFor, waitUntilReady } from '../../harness/service.js';
import { exec } from '../helpers/apt.js';
import { freshPostgres } from '../helpers/app.js';
import { makeTempDir } from '../helpers/tmp.js';
import { redisAnswers } from '../helpers/redis.js';

const NGINX = '/usr/sbin/nginx';

function nginxConfig(dir: string, port: number, replicas: number[], repoDir: string): string {
  return `
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
error_log ${dir}/error.log warn;
pid ${dir}/nginx.pid;
events { worker_connections 256; }
http {
  access_log ${dir}/access.log combined;
  log_format replicas '$request_method $uri $status $upstream_addr';
  access_log ${dir}/upstreams.log replicas;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  upstream tollgate { ${replicas.map((p) => `server 127.0.0.1:${p} max_fails=1 fail_timeout=2s;`).join(' ')} }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 64m;
    location /repo/ { alias ${repoDir}/; }
    location / { proxy_pass http://tollgate; proxy_set_header X-Forwarded-For $remote_addr; }
  }
}`;
}

const missing = !process.env.TEST_DATABASE_URL ? 'TEST_DATABASE_URL (PostgreSQL) is not set' : !existsSync(NGINX) ? 'nginx is not installed' : !(await redisAnswers()) ? 'Redis does not answer on 127.0.0.1:6379' : null;

describe('two replicas on PostgreSQL and Redis behind nginx', { skip: missing ?? false }, () => {
  let work: { dir: string; cleanup: () => Promise<void> };
  let db: Awaited<ReturnType<typeof freshPostgres>>;
  let nginx: ChildProcess | null = null;
  const replicas: Array<{ port: number; child: ChildProcess | null }> = [];
  let dataDir: string;
  let base: string;
  let token: string;
  let env: Record<string, string>;
  const published = new Set<string>();

  const startReplica = (r: { port: number; child: ChildProcess | null }) => {
    r.child = spawnService(dataDir, r.port, env);
  };

  before(async () => {
    work = await makeTempDir('tollgate-replicas-');
    db = await freshPostgres();
    dataDir = join(work.dir, 'shared');
    const ngx = join(work.dir, 'nginx');
    for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) await mkdir(join(ngx, sub), { recursive: true });
    env = {
      // Both replicas read nginx's access log for the download statistics.
      ACCESS_LOG_PATH: join(ngx, 'access.log*'), ACCESS_LOG_INTERVAL_SECONDS: '1',
      DATABASE_URL: db.url, REDIS_URL: 'redis://127.0.0.1:6379', JWT_SECRET_KEY: 'replica-test-secret-0123456789abcdefghijkl',
      SETTINGS_KEY: 'replica-test-settings-key-0123456789', SIGNING_KEY_ALGORITHM: 'ed25519', BCRYPT_ROUNDS: '4', RATE_LIMITS: 'on',
      TRUSTED_PROXIES: '127.0.0.1',
    };
    for (let i = 0; i < 2; i++) replicas.push({ port: await freePort(), child: null });
    // Both at once, on an empty DATA_DIR and database: one key, one schema, one admin.
    replicas.forEach(startReplica);
    await Promise.all(replicas.map((r) => waitUntilReady(`http://127.0.0.1:${r.port}`, `replica ${r.port}`, 60_000)));
    const port = await freePort();
    await writeFile(join(ngx, 'nginx.conf'), nginxConfig(ngx, port, replicas.map((r) => r.port), join(dataDir, 'repo')));
    nginx = spawn(NGINX, ['-p', ngx, '-c', join(ngx, 'nginx.conf'), '-g', 'daemon off;'], { stdio: 'ignore' });
    base = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await fetch(`${base}/health`)).ok, 'nginx');
    token = await loginAsInitialAdmin(base, dataDir);
  });

  after(async () => {
    nginx?.kill('SIGTERM');
    for (const r of replicas) r.child?.kill('SIGKILL');
    await Promise.all(replicas.map((r) => (r.child && r.child.exitCode === null && r.child.signalCode === null ? new Promise((done) => r.child!.once('exit', done)) : null)));
    await db?.drop();
    await work?.cleanup();
  });

  const upload = async (path: string): Promise<number> => {
    const form = await multipartBody({ distribution: 'bookworm' }, { path });
    const res = await fetch(`${base}/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...form.headers }, body: form.payload });
    await res.arrayBuffer();
    return res.status;
  };
  /** Runs `clients` uploaders over the files; `onAnswer` sees each answer as it comes. */
  const uploadAll = async (files: Array<{ name: string; path: string }>, clients: number, onAnswer: (done: number) => void = () => undefined) => {
    let next = 0;
    let done = 0;
    await Promise.all(Array.from({ length: clients }, async () => {
      while (next < files.length) {
        const file = files[next++]!;
        const status = await upload(file.path).catch(() => 0);
        if (status === 201) published.add(file.name);
        onAnswer(++done);
      }
    }));
  };
  const debs = async (prefix: string, n: number) => {
    const dir = join(work.dir, prefix);
    await mkdir(dir, { recursive: true });
    const out: Array<{ name: string; path: string }> = [];
    for (let i = 0; i < n; i += 8) {
      out.push(...(await Promise.all(Array.from({ length: Math.min(8, n - i) }, async (_, k) => {
        const name = `${prefix}-${i + k}`;
        return { name, path: await buildDeb(dir, { name, version: '1.0+ds1-1', files: { [`usr/share/${prefix}/${i + k}`]: `${name}\n` } }) };
      }))));
    }
    return out;
  };
  /** The signed index as nginx serves it from the shared folder: checked with gpgv, then its package names. */
  const indexedNames = async (): Promise<string[]> => {
    const dir = join(work.dir, `check-${Date.now()}`);
    await mkdir(dir, { recursive: true });
    const get = async (path: string) => Buffer.from(await (await fetch(`${base}/repo/${path}`)).arrayBuffer());
    await writeFile(join(dir, 'InRelease'), await get('apt/dists/bookworm/InRelease'));
    await writeFile(join(dir, 'keyring.gpg'), await get('keys/tollgate.gpg'));
    const verified = await exec('gpgv', ['--keyring', join(dir, 'keyring.gpg'), join(dir, 'InRelease')]);
    assert.equal(verified.code, 0, verified.stderr);
    const packages = (await get('apt/dists/bookworm/main/binary-amd64/Packages')).toString('utf8');
    return [...packages.matchAll(/^Package: (.+)$/gm)].map((m) => m[1]!);
  };

  it('200 uploads from 8 clients through nginx: each one answered 201 is in the signed index once; the audit chain verifies', async () => {
    // Uploads are not rate limited here; the per-user change-password limit is checked below.
    const settings = await fetch(`${base}/settings/`, { method: 'PATCH', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ rate_limits: { upload: 0, change_password: 3 } }) });
    assert.equal(settings.status, 200, await settings.text());
    // Each replica reads settings through a cache of two seconds.
    await new Promise((r) => setTimeout(r, 2100));
    await uploadAll(await debs('replica', 200), 8);
    assert.equal(published.size, 200, 'every upload answered 201');
    // A publish another replica coalesced may still be running: wait for the index to catch up.
    await waitFor(async () => (await indexedNames()).length >= published.size, 'the index to list every package', 30_000);
    const names = await indexedNames();
    assert.equal(names.length, new Set(names).size, 'no package listed twice');
    for (const name of published) assert.ok(names.includes(name), `${name} answered 201 but is not in the index`);
    // nginx balanced the uploads over both replicas.
    const upstreams = (await readFile(join(work.dir, 'nginx', 'upstreams.log'), 'utf8')).split('\n').filter((l) => l.startsWith('POST /upload 201'));
    for (const r of replicas) assert.ok(upstreams.some((l) => l.endsWith(`:${r.port}`)), `replica ${r.port} served uploads`);
    const audit = await (await fetch(`${base}/audit/verify`, { headers: { authorization: `Bearer ${token}` } })).json() as { ok: boolean; entries: number };
    assert.equal(audit.ok, true, JSON.stringify(audit));
    assert.ok(audit.entries >= 201);
  });

  it('counts each download nginx served once, though both replicas read its log', async () => {
    const packages = (await (await fetch(`${base}/repo/apt/dists/bookworm/main/binary-amd64/Packages`)).text());
    const filename = /^Filename: (.*replica-7_.*)$/m.exec(packages)![1]!;
    for (let i = 0; i < 3; i++) assert.equal((await fetch(`${base}/repo/apt/${filename}`)).status, 200);
    const count = async () => {
      const stats = await (await fetch(`${base}/downloads/stats?days=7`, { headers: { authorization: `Bearer ${token}` } })).json() as { packages: Array<{ name: string; downloads: number }> };
      return stats.packages.find((p) => p.name === 'replica-7')?.downloads ?? 0;
    };
    await waitFor(async () => (await count()) >= 3, 'the downloads in the statistics', 20_000);
    // Another few reads of the log by both replicas: still three.
    await new Promise((r) => setTimeout(r, 2500));
    assert.equal(await count(), 3);
  });

  it('counts a rate limit across replicas (Redis)', async () => {
    const attempt = (port: number) => fetch(`http://127.0.0.1:${port}/auth/change-password`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ current_password: 'not-the-password', new_password: 'Another-Passw0rd!' }),
    }).then((r) => r.status);
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push(await attempt(replicas[i % 2]!.port));
    assert.deepEqual(statuses.slice(0, 3).map((s) => s !== 429), [true, true, true], statuses.join());
    assert.equal(statuses[3], 429, `the fourth attempt, on the other replica, is over the limit of three: ${statuses.join()}`);
  });

  it('a replica killed mid-load loses nothing answered 201; the survivor serves; the restarted one catches up', async () => {
    const files = await debs('survive', 60);
    const victim = replicas[1]!;
    await uploadAll(files, 8, (done) => {
      if (done === 20) victim.child!.kill('SIGKILL');
    });
    assert.ok(files.filter((f) => published.has(f.name)).length >= 40, 'the survivor kept answering');
    await waitFor(async () => {
      const names = await indexedNames();
      return [...published].every((n) => names.includes(n));
    }, 'every package answered 201 in the index', 30_000);
    const names = await indexedNames();
    assert.equal(names.length, new Set(names).size);
    startReplica(victim);
    const direct = `http://127.0.0.1:${victim.port}`;
    await waitUntilReady(direct, 'the restarted replica', 60_000);
    const last = files.filter((f) => published.has(f.name)).at(-1)!;
    const res = await fetch(`${direct}/artifacts/${last.name}`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(res.status, 200, 'the restarted replica sees what the survivor stored');
    const audit = await (await fetch(`${direct}/audit/verify`, { headers: { authorization: `Bearer ${token}` } })).json() as { ok: boolean };
    assert.equal(audit.ok, true);
  });
});
