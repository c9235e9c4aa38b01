import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildDeb } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { freePort } from '../../harness/net.js';
import { loginAsInitialAdmin, waitUntilReady } from '../../harness/service.js';
import { buildBundledService } from '../../harness/build.js';
import { BUNDLE_PREFIX } from '../../scripts/bundle.mjs';
import { aptSandbox, exec } from '../helpers/apt.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { makeTempDir } from '../helpers/tmp.js';

const root = new URL('../..', import.meta.url).pathname;
const sha256 = async (path: string) => createHash('sha256').update(await readFile(path)).digest('hex');

/**
 * The service as `npm start` and deploy/ run it: tsc's output bundled by scripts/bundle.mjs. The
 * rest of the suite runs src/ through tsx, so this is where a dependency that the bundler breaks
 * (a `require` of a built-in, a file read next to its own module, a lazily imported chunk) shows.
 */
describe('the bundled service (dist/tollgate.mjs), as npm start runs it', () => {
  let work: { dir: string; cleanup: () => Promise<void> };
  let build: string | undefined;
  let service: { base: string; stop: () => Promise<void> } | undefined;
  let smtp: TestSmtpServer;
  let base: string;
  let admin: string;
  let bundle: string[];

  async function startService(entry: string, dataDir: string): Promise<{ base: string; stop: () => Promise<void> }> {
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, ['--enable-source-maps', entry], {
      cwd: work.dir,
      env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', RATE_LIMITS: 'off', LOG_LEVEL: 'warn', SIGNING_KEY_ALGORITHM: 'ed25519', EDITION: 'enterprise' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => { stderr += chunk.toString(); });
    const stop = async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    };
    const url = `http://127.0.0.1:${port}`;
    await waitUntilReady(url, `${entry} to be ready`, 60_000).catch(async (error: Error) => {
      await stop();
      throw new Error(`${error.message}\n${stderr}`);
    });
    return { base: url, stop };
  }

  before(async () => {
    work = await makeTempDir('tollgate-bundle-');
    // Built inside the checkout, as an installation's dist/ is: Node finds the packages left to
    // its own loader (better-sqlite3, Swagger UI…) in node_modules above the bundle.
    await mkdir(join(root, '.tmp'), { recursive: true });
    build = await mkdtemp(join(root, '.tmp', 'bundle-test-'));
    bundle = await buildBundledService(join(build, 'dist'), { typeErrors: 'fail' });
    // The web interface where an installation has it, ../ui/dist from dist/ (config.ts finds it from its own module's place).
    await symlink(join(root, 'ui'), join(build, 'ui'));
    smtp = await startSmtpServer();
    const data = join(work.dir, 'data');
    service = await startService(bundle[0]!, data);
    base = service.base;
    admin = await loginAsInitialAdmin(base, data);
  });
  after(async () => {
    await service?.stop();
    await smtp?.close();
    await work?.cleanup();
    if (build) await rm(build, { recursive: true, force: true });
  });

  const api = (path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { authorization: `Bearer ${admin}`, ...(init.body && typeof init.body === 'string' ? { 'content-type': 'application/json' } : {}), ...init.headers } });

  it('is one entry module and lazily loaded chunks, whose source map names src/*.ts', async () => {
    assert.ok(bundle[0]!.endsWith(`${BUNDLE_PREFIX}.mjs`));
    assert.ok(bundle.length >= 2, `nodemailer and ldapts are imported lazily, so they come as chunks: ${bundle.join(', ')}`);
    const map = JSON.parse(await readFile(`${bundle[0]}.map`, 'utf8')) as { sources: string[] };
    assert.ok(map.sources.some((s) => s.endsWith('src/main.ts')), 'tsc source maps chained: traces name the TypeScript sources');
    assert.ok(!map.sources.some((s) => /\/dist\/.*\.js$/.test(s) && !s.includes('node_modules')), 'no compiled file of ours left unmapped');
  });

  it('takes an upload and serves a signed index that gpgv verifies and a real apt-get downloads from', async () => {
    const deb = await buildDeb(work.dir, { name: 'tollgate-bundled', version: '1:2.0.1+ds1-1+b4', arch: 'amd64' });
    const form = await multipartBody({ distribution: 'jammy', sha256: await sha256(deb) }, { path: deb });
    const res = await fetch(`${base}/upload/`, { method: 'POST', headers: { authorization: `Bearer ${admin}`, ...form.headers }, body: form.payload });
    assert.equal(res.status, 201, await res.clone().text());
    assert.equal(((await res.json()) as { status: string }).status, 'published');

    const key = join(work.dir, 'tollgate.gpg');
    await writeFile(key, Buffer.from(await (await fetch(`${base}/repo/keys/tollgate.gpg`)).arrayBuffer()));
    const inRelease = join(work.dir, 'InRelease');
    await writeFile(inRelease, Buffer.from(await (await fetch(`${base}/repo/apt/dists/jammy/InRelease`)).arrayBuffer()));
    const verified = await exec('gpgv', ['--keyring', key, inRelease]);
    assert.equal(verified.code, 0, verified.stderr);

    const apt = await aptSandbox(join(work.dir, 'client'));
    await apt.setSource(`deb [signed-by=${key}] ${base}/repo/apt jammy main`);
    await apt.updateCleanly();
    const download = await apt.download('tollgate-bundled');
    assert.equal(download.code, 0, download.stderr);
    const [file] = await readdir(join(apt.dir, 'downloads'));
    assert.equal(await sha256(join(apt.dir, 'downloads', file!)), await sha256(deb));
  });

  it('loads a lazily imported chunk when first needed: a test e-mail through nodemailer reaches a local SMTP server', async () => {
    const settings = await api('/settings', { method: 'PATCH', body: JSON.stringify({ smtp_host: smtp.host, smtp_port: smtp.port, smtp_from: 'tollgate@example.test', smtp_tls: 'none', notify_emails: ['ops@example.org'] }) });
    assert.equal(settings.status, 200, await settings.text());
    const res = await api('/settings/test-email', { method: 'POST' });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(((await res.json()) as { ok: boolean }).ok, true);
    assert.equal(smtp.messages.at(-1)?.subject, 'Tollgate test e-mail');
  });

  it('serves the API documentation (Swagger UI reads its assets beside its own module), the same document as tsc\'s unbundled output, and the web interface', async () => {
    const docs = await fetch(`${base}/docs/static/index.html`);
    assert.equal(docs.status, 200);
    assert.match(await docs.text(), /swagger/i);
    const bundled = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    assert.ok(bundled.paths['/upload'] !== undefined);
    const unbundled = await startService(join(build!, 'dist', 'main.js'), join(work.dir, 'data-unbundled'));
    try {
      assert.deepEqual(bundled, await (await fetch(`${unbundled.base}/openapi.json`)).json(), 'every route and schema as in the unbundled build');
    } finally {
      await unbundled.stop();
    }
    const ui = await fetch(`${base}/ui/`, { headers: { accept: 'text/html' } });
    assert.equal(ui.status, 200, 'the web interface found at ../ui/dist from the bundle, as from tsc\'s dist/');
    assert.match(ui.headers.get('content-type') ?? '', /text\/html/);
  });
});
