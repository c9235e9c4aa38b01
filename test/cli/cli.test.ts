/**
 * The `tollgate` executable, built with tsc and run as its own process against the real service
 * (also its own process) with a real clamd and a local OSV feed: every command, every exit code
 * (published 0, held 2, quarantined 3, rejected 4, policy violation 5, usage/transport 1), JSON
 * output parsed, a clear 401, a token stored 0600 by `login`, and a service that dies mid-upload.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildDeb } from '../../harness/debs.js';
import { freePort } from '../../harness/net.js';
import { loginAsInitialAdmin, spawnService, waitUntilReady } from '../../harness/service.js';
import { buildAptRepo, makeGpgKey, serveDir, type StaticServer } from '../../harness/upstream.js';
import { EICAR, startClamd, type RunningClamd } from '../helpers/clamd.js';
import { makeTempDir } from '../helpers/tmp.js';
import { buildCli, runCli, type CliRun } from '../../harness/cli.js';
import { startFeedServer, writeOsvFeed, type FeedServer } from '../security/support.js';

/** The built client (buildCli: this process's own copy), built in `before`. */
let builtCli: Awaited<ReturnType<typeof buildCli>> | undefined;

type Run = CliRun;

/** Runs the built executable; `env` adds to a clean environment (no inherited TOLLGATE_*). */
const tollgate = (args: string[], env: Record<string, string>, input?: string): Promise<Run> => runCli(builtCli!.main, args, env, input);

const json = <T = Record<string, unknown>>(run: Run): T => {
  try {
    return JSON.parse(run.stdout) as T;
  } catch {
    throw new Error(`not JSON (exit ${run.code}): ${run.stdout}\n${run.stderr}`);
  }
};

describe('tollgate CLI (built executable against the real service)', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let clamd: RunningClamd;
  let feeds: FeedServer;
  let upstream: StaticServer;
  let service: ChildProcess;
  let base: string;
  let env: Record<string, string>;
  const debs: Record<string, string> = {};

  before(async () => {
    builtCli = await buildCli();
    tmp = await makeTempDir('tollgate-cli-');
    clamd = await startClamd();
    // cli-held: a critical CVE (policy `review`); cli-doomed: the same; cli-clean: a medium CVE with no fix (policy `warn`).
    await writeOsvFeed(join(tmp.dir, 'osv.json'), [
      { id: 'DSA-9001-1', ecosystem: 'Debian:12', pkg: 'cli-held', cves: ['CVE-2026-9001'], fixed: '1.0-2', severity: 'critical' },
      { id: 'DSA-9002-1', ecosystem: 'Debian:12', pkg: 'cli-doomed', cves: ['CVE-2026-9002'], fixed: '1.0-2', severity: 'critical' },
      { id: 'DSA-9003-1', ecosystem: 'Debian:12', pkg: 'cli-clean', cves: ['CVE-2026-9003'], severity: 'medium' },
    ]);
    feeds = await startFeedServer(tmp.dir);
    const key = await makeGpgKey(join(tmp.dir, 'gpg'));
    await buildAptRepo(join(tmp.dir, 'upstream'), key, [
      { name: 'cli-app', version: '2.0', depends: 'cli-lib (>= 1)' },
      { name: 'cli-lib', version: '1.5' },
    ]);
    upstream = await serveDir(join(tmp.dir, 'upstream'));

    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const dataDir = join(tmp.dir, 'data');
    service = spawnService(dataDir, port, { CLAMAV_SOCKET: clamd.socket, SIGNING_KEY_ALGORITHM: 'ed25519' });
    // Started from sources through tsx: slow on a busy machine.
    await waitUntilReady(base, 'the service', 120_000);
    const admin = await loginAsInitialAdmin(base, dataDir);
    env = { TOLLGATE_URL: base, TOLLGATE_TOKEN: admin, XDG_CONFIG_HOME: join(tmp.dir, 'config') };

    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
      const text = await res.text();
      assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
      return JSON.parse(text) as Record<string, unknown>;
    };
    await api('PATCH', '/settings/', { vuln_feeds: [{ name: 'test', url: feeds.url('osv.json'), format: 'osv' }] });
    await api('POST', '/import/sync-security');
    const source = await api('POST', '/import/sources', { name: 'up', type: 'apt', url: upstream.url, suite: 'stable', key: key.armoredPublic, distribution: 'bookworm' });
    await api('POST', `/import/sync/${String(source.id)}`);

    for (const name of ['cli-clean', 'cli-held', 'cli-doomed', 'cli-second']) {
      debs[name] = await buildDeb(tmp.dir, { name, version: '1.0-1' });
    }
    debs.evil = await buildDeb(tmp.dir, { name: 'cli-evil', version: '1.0-1', files: { 'usr/share/cli-evil/readme.txt': `hello\n${EICAR}\n` } });
    debs.malformed = join(tmp.dir, 'broken_1.0_amd64.deb');
    await writeFile(debs.malformed, '!<arch>\nthis is not a package\n');
  });

  after(async () => {
    service?.kill('SIGTERM');
    await upstream?.close();
    await feeds?.close();
    await clamd?.stop();
    await tmp?.cleanup();
    await builtCli?.remove();
  });

  it('upload exits 0 for a published package, with the pipeline steps on stderr and JSON on stdout', async () => {
    const run = await tollgate(['upload', debs['cli-clean']!, '--dist', 'bookworm', '--sha256', 'auto', '--json'], env);
    assert.equal(run.code, 0, run.stderr);
    const [outcome] = json<Array<{ status: string; name: string; result: { pipeline: Record<string, string> } }>>(run);
    assert.equal(outcome!.status, 'published');
    assert.equal(outcome!.name, 'cli-clean');
    assert.equal(outcome!.result.pipeline.provenance, 'verified', 'the auto SHA-256 was checked by the service');
    assert.equal(outcome!.result.pipeline.antivirus, 'clean');

    const people = await tollgate(['upload', debs['cli-second']!, '--dist', 'bookworm'], env);
    assert.equal(people.code, 0, people.stderr);
    for (const step of ['format', 'provenance', 'antivirus', 'cve', 'signature', 'dependencies']) assert.match(people.stderr, new RegExp(`cli-second_1.0-1_amd64.deb: ${step} `), `step ${step} shown`);
    assert.match(people.stdout, /cli-second\s+1\.0-1\s+bookworm\s+published/);
  });

  it('upload exits 2 held for review, 3 quarantined (EICAR, real clamd), 4 rejected (malformed); several files give the worst', async () => {
    const held = await tollgate(['upload', debs['cli-held']!, '--dist', 'bookworm', '--json'], env);
    assert.equal(held.code, 2, held.stderr);
    assert.equal(json<Array<{ status: string }>>(held)[0]!.status, 'pending_review');

    const evil = await tollgate(['upload', debs.evil!, '--dist', 'bookworm', '--json'], env);
    assert.equal(evil.code, 3, evil.stderr);
    assert.equal(json<Array<{ status: string }>>(evil)[0]!.status, 'quarantined');

    const broken = await tollgate(['upload', debs.malformed!, '--dist', 'bookworm', '--json'], env);
    assert.equal(broken.code, 4, broken.stderr);
    assert.equal(json<Array<{ status: string; result: { code: string } }>>(broken)[0]!.status, 'rejected');

    const both = await tollgate(['upload', debs['cli-clean']!, debs.evil!, '--dist', 'bookworm', '--json'], env);
    assert.equal(both.code, 3, 'quarantined outranks published');
    assert.deepEqual(json<Array<{ status: string }>>(both).map((o) => o.status), ['published', 'quarantined']);
  });

  it('status and wait exit with the version\'s verdict; wait gives up at its timeout', async () => {
    assert.equal((await tollgate(['status', 'cli-clean', '1.0-1'], env)).code, 0);
    const held = await tollgate(['status', 'cli-held', '1.0-1', '--json'], env);
    assert.equal(held.code, 2);
    assert.equal(json(held).status, 'pending_review');
    const list = await tollgate(['status', 'cli-clean'], env);
    assert.equal(list.code, 0);
    assert.match(list.stdout, /1\.0-1\s+amd64\s+bookworm\s+published/);

    const started = Date.now();
    const waited = await tollgate(['wait', 'cli-held', '1.0-1', '--until', 'decided', '--timeout', '2', '--interval', '1', '--json'], env);
    assert.equal(waited.code, 2);
    assert.equal(json(waited).timed_out, true);
    assert.ok(Date.now() - started >= 2000);

    const missing = await tollgate(['status', 'no-such-package', '1.0'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /HTTP 404/);
  });

  it('vulns --fail-on exits 5 when a finding at or above the threshold affects a gated package, 0 otherwise', async () => {
    const critical = await tollgate(['vulns', '--dist', 'bookworm', '--fail-on', 'critical', '--json'], env);
    assert.equal(critical.code, 5, critical.stdout);
    const answer = json<{ violations: number; findings: Array<{ cve_id: string; package: string; severity: string; counted: boolean }> }>(critical);
    assert.ok(answer.findings.some((f) => f.cve_id === 'CVE-2026-9001' && f.package === 'cli-held' && f.severity === 'critical' && f.counted));
    assert.equal(answer.violations, 1);
    assert.equal((await tollgate(['vulns', '--dist', 'jammy', '--fail-on', 'critical'], env)).code, 0, 'nothing in jammy');
    assert.equal((await tollgate(['vulns', '--dist', 'bookworm'], env)).code, 0, 'without --fail-on it only reports');
    const bad = await tollgate(['vulns', '--dist', 'bookworm', '--fail-on', 'severe'], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /--fail-on must be one of/);
  });

  it('review list and decide: the contract\'s rules are checked first; upload --wait ends with the decision', async () => {
    const queue = await tollgate(['review', 'list', '--dist', 'bookworm', '--json'], env);
    assert.equal(queue.code, 0);
    assert.ok(json<Array<{ name: string }>>(queue).some((p) => p.name === 'cli-held'));

    const noExpiry = await tollgate(['review', 'decide', 'cli-held', '1.0-1', '--action', 'exception', '--justification', 'vendor fix pending'], env);
    assert.equal(noExpiry.code, 1);
    assert.match(noExpiry.stderr, /exception needs --expires-days/);
    const blank = await tollgate(['review', 'decide', 'cli-held', '1.0-1', '--action', 'accept_risk', '--justification', '   '], env);
    assert.equal(blank.code, 1);
    assert.match(blank.stderr, /justification must not be blank/);

    const accepted = await tollgate(['review', 'decide', 'cli-held', '1.0-1', '--action', 'accept_risk', '--justification', 'not reachable in our use', '--expires-days', '30'], env);
    assert.equal(accepted.code, 0, accepted.stderr);
    assert.equal((await tollgate(['wait', 'cli-held', '1.0-1', '--until', 'published', '--timeout', '5'], env)).code, 0);
    assert.equal((await tollgate(['vulns', '--dist', 'bookworm', '--fail-on', 'critical'], env)).code, 0, 'an accepted risk no longer fails the gate');
    assert.equal((await tollgate(['vulns', '--dist', 'bookworm', '--fail-on', 'critical', '--include-accepted'], env)).code, 5);
    // cli-clean's medium CVE has no fix: --ignore-unfixed leaves it out.
    assert.equal((await tollgate(['vulns', '--dist', 'bookworm', '--fail-on', 'medium'], env)).code, 5);
    assert.equal((await tollgate(['vulns', '--dist', 'bookworm', '--fail-on', 'medium', '--ignore-unfixed'], env)).code, 0);

    // An upload that waits for its review: rejected by a reviewer meanwhile, it exits 3.
    const waiting = tollgate(['upload', debs['cli-doomed']!, '--dist', 'bookworm', '--wait', '--interval', '1', '--timeout', '60'], env);
    for (let i = 0; i < 100; i++) {
      if ((await tollgate(['status', 'cli-doomed', '1.0-1'], env)).code === 2) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const rejected = await tollgate(['review', 'decide', 'cli-doomed', '1.0-1', '--action', 'reject', '--justification', 'exploited in the wild'], env);
    assert.equal(rejected.code, 0, rejected.stderr);
    const done = await waiting;
    assert.equal(done.code, 3, done.stderr);
    assert.match(done.stderr, /decided, now quarantined/);
  });

  it('promote, migrate and sbom (CycloneDX to a file, SPDX on stdout)', async () => {
    const promoted = await tollgate(['promote', 'cli-clean', '1.0-1', '--from', 'bookworm', '--to', 'jammy', '--json'], env);
    assert.equal(promoted.code, 0, promoted.stderr);
    assert.equal((await tollgate(['status', 'cli-clean', '1.0-1', '--dist', 'jammy'], env)).code, 0);
    const migrated = await tollgate(['migrate', '--from', 'bookworm', '--to', 'noble', 'cli-second', '--json'], env);
    assert.equal(migrated.code, 0, migrated.stderr);
    assert.equal(json<{ migrated: number }>(migrated).migrated, 1);
    assert.equal((await tollgate(['promote', 'cli-clean', '1.0-1', '--from', 'bookworm', '--to', 'rocky9'], env)).code, 1, 'deb into an RPM distribution is refused');

    const file = join(tmp.dir, 'cli-clean.cdx.json');
    const sbom = await tollgate(['sbom', 'cli-clean', '1.0-1', '--dist', 'bookworm', '--format', 'cyclonedx', '-o', file], env);
    assert.equal(sbom.code, 0, sbom.stderr);
    const cdx = JSON.parse(await readFile(file, 'utf8')) as { bomFormat: string; specVersion: string };
    assert.equal(cdx.bomFormat, 'CycloneDX');
    assert.equal(cdx.specVersion, '1.5');
    const spdx = await tollgate(['sbom', '--dist', 'bookworm', '--format', 'spdx'], env);
    assert.equal(spdx.code, 0, spdx.stderr);
    assert.equal(json(spdx).spdxVersion, 'SPDX-2.3');
  });

  it('import search, resolve and fetch from a synced upstream', async () => {
    const search = await tollgate(['import', 'search', 'cli-', '--json'], env);
    assert.equal(search.code, 0, search.stderr);
    assert.deepEqual(json<{ items: Array<{ name: string }> }>(search).items.map((i) => i.name).sort(), ['cli-app', 'cli-lib']);
    const resolve = await tollgate(['import', 'resolve', 'cli-app', '--dist', 'bookworm', '--json'], env);
    assert.equal(resolve.code, 0, resolve.stderr);
    assert.match(resolve.stdout, /cli-lib/);
    const fetched = await tollgate(['import', 'fetch', 'cli-app', '--dist', 'bookworm', '--json'], env);
    assert.equal(fetched.code, 0, fetched.stderr);
    assert.deepEqual(json<{ packages: Array<{ name: string; status: string }> }>(fetched).packages.map((p) => [p.name, p.status]).sort(), [['cli-app', 'published'], ['cli-lib', 'published']]);
  });

  it('tokens create, list and revoke; a revoked token gets a clear 401 and exit 1; audit verify', async () => {
    const created = await tollgate(['tokens', 'create', 'ci', '--role', 'uploader', '--json'], env);
    assert.equal(created.code, 0, created.stderr);
    const token = json<{ token: string; token_id: string }>(created);
    assert.match(token.token, /^tg_/);
    const who = await tollgate(['whoami', '--json'], { ...env, TOLLGATE_TOKEN: token.token });
    assert.equal(who.code, 0);
    assert.equal(json(who).role, 'admin', 'whoami names the account; the token acts as uploader');
    const listed = await tollgate(['tokens', 'list', '--json'], env);
    assert.ok(json<Array<{ token_id: string }>>(listed).some((t) => t.token_id === token.token_id));
    assert.ok(!listed.stdout.includes(token.token), 'the secret is never listed');
    // A read token: tg_r_, for the repository only, so the CLI (an API client) is refused with it.
    const read = await tollgate(['tokens', 'create', 'apt hosts', '--read', 'jammy,noble', '--json'], env);
    assert.equal(read.code, 0, read.stderr);
    const readToken = json<{ token: string; kind: string; distributions: string[] }>(read);
    assert.match(readToken.token, /^tg_r_/);
    assert.deepEqual([readToken.kind, readToken.distributions], ['read', ['jammy', 'noble']]);
    assert.notEqual((await tollgate(['whoami'], { ...env, TOLLGATE_TOKEN: readToken.token })).code, 0);
    const table = await tollgate(['tokens', 'list'], env);
    assert.match(table.stdout, /apt hosts +read +reader +jammy,noble/);
    assert.equal((await tollgate(['tokens', 'revoke', token.token_id], env)).code, 0);
    const revoked = await tollgate(['whoami'], { ...env, TOLLGATE_TOKEN: token.token });
    assert.equal(revoked.code, 1);
    assert.match(revoked.stderr, /not authenticated .*tollgate login/);
    assert.equal(revoked.stdout, '');

    const audit = await tollgate(['audit', 'verify', '--json'], env);
    assert.equal(audit.code, 0, audit.stderr);
    assert.equal(json(audit).ok, true);
  });

  it('login stores a session in a 0600 file that later commands use; logout forgets it', async () => {
    const password = (await readFile(join(tmp.dir, 'data', 'initial-admin-password'), 'utf8')).trim();
    const { TOLLGATE_TOKEN: _ignored, ...noToken } = env;
    const wrong = await tollgate(['login', '--url', base, '-u', 'admin'], noToken, 'not-the-password\n');
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /not authenticated/);
    const login = await tollgate(['login', '--url', base, '-u', 'admin'], noToken, `${password}\n`);
    assert.equal(login.code, 0, login.stderr);
    const file = join(tmp.dir, 'config', 'tollgate', 'config.json');
    assert.equal((await stat(file)).mode & 0o777, 0o600);
    const { TOLLGATE_URL: _url, ...bare } = noToken;
    const who = await tollgate(['whoami'], bare);
    assert.equal(who.code, 0, who.stderr);
    assert.match(who.stdout, /^admin \(admin\)/);
    assert.equal((await tollgate(['logout'], bare)).code, 0);
    const after = await tollgate(['whoami'], bare);
    assert.equal(after.code, 1);
    assert.match(after.stderr, /no credential/);
  });

  it('health lists the components and exits 0; a degraded service exits 1', async () => {
    const healthy = await tollgate(['health'], { ...env, NO_COLOR: '1' });
    assert.equal(healthy.code, 0, healthy.stderr);
    assert.match(healthy.stdout, /^ok: Tollgate v\S+ \(\w+\), up \d+ s$/m);
    assert.match(healthy.stdout, /^database +ok +dialect=sqlite$/m);
    assert.match(healthy.stdout, /^clamav +ok +version=\d/m, 'the real clamd');
    assert.match(healthy.stdout, /^redis +not configured +REDIS_URL not set/m);
    const report = json<{ components: Record<string, { ok: boolean }> }>(await tollgate(['health', '--json'], env));
    assert.deepEqual(Object.keys(report.components).sort(), ['clamav', 'database', 'gpg', 'grype', 'redis']);

    // A service whose antivirus daemon does not answer: its report says degraded.
    const degraded = createServer((req, res) => {
      assert.equal(req.url, '/api/v1/health');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({
        status: 'degraded', version: 'v9.9.9', edition: 'enterprise', uptime_seconds: 12.3,
        components: { database: { ok: true, configured: true }, clamav: { ok: false, configured: true, detail: 'connect ENOENT /run/clamd.ctl' } },
      }));
    });
    await new Promise<void>((resolve) => degraded.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(degraded.address() as AddressInfo).port}`;
      const run = await tollgate(['health'], { TOLLGATE_URL: url, NO_COLOR: '1', XDG_CONFIG_HOME: join(tmp.dir, 'empty-config') });
      assert.equal(run.code, 1, run.stdout);
      assert.match(run.stdout, /^degraded: Tollgate v9\.9\.9/m);
      assert.match(run.stdout, /^clamav +failing +connect ENOENT/m);
    } finally {
      degraded.close();
    }
  });

  it('usage errors exit 1 with a message on stderr', async () => {
    const noDist = await tollgate(['upload', debs['cli-clean']!], env);
    assert.equal(noDist.code, 1);
    assert.match(noDist.stderr, /--dist/);
    const noFile = await tollgate(['upload', join(tmp.dir, 'absent.deb'), '--dist', 'bookworm'], env);
    assert.equal(noFile.code, 1);
    assert.match(noFile.stderr, /cannot read/);
    const noUrl = await tollgate(['whoami'], { XDG_CONFIG_HOME: join(tmp.dir, 'empty-config') });
    assert.equal(noUrl.code, 1);
    assert.match(noUrl.stderr, /no service URL/);
    const badScheme = await tollgate(['whoami', '--url', 'ftp://example.org'], env);
    assert.equal(badScheme.code, 1);
    assert.match(badScheme.stderr, /http:\/\/ or https:\/\//);
    const help = await tollgate(['upload', '--help'], env);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /5 {2}policy violation/);
  });

  it('a service that goes away mid-upload: a clear error and exit 1', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const dataDir = join(tmp.dir, 'doomed-data');
    const doomed = spawnService(dataDir, port, { CLAMAV_SOCKET: clamd.socket, SIGNING_KEY_ALGORITHM: 'ed25519' });
    await waitUntilReady(url, 'the second service', 120_000);
    const token = await loginAsInitialAdmin(url, dataDir);
    const child = spawn(process.execPath, [builtCli!.main, 'upload', debs.evil!, '--dist', 'noble'], { env: { ...process.env, NO_COLOR: '1', TOLLGATE_URL: url, TOLLGATE_TOKEN: token } });
    let stderr = '';
    // Killed as soon as the pipeline reports its first step: the stream is open, no verdict yet.
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.includes(': format ')) doomed.kill('SIGKILL');
    });
    const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? -1)));
    assert.equal(code, 1, stderr);
    assert.match(stderr, /(closed the connection before the upload's verdict|cannot reach the service)/);
    const refused = await tollgate(['whoami'], { TOLLGATE_URL: url, TOLLGATE_TOKEN: token });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /cannot reach the service at http:\/\/127\.0\.0\.1:\d+: ECONNREFUSED/);
  });
});
