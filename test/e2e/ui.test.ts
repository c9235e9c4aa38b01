/**
 * The web interface in a real browser (Debian's chromium driven by playwright-core) against the
 * real service in its own process: log in, upload and watch the pipeline, decide on a held
 * package, manage users and tokens, and what a reader is not offered. axe-core checks the main
 * pages in the same run; screenshots of them go to UI_SCREENSHOTS_DIR (docs/screenshots to
 * refresh the README's), else to a temporary folder.
 */
import assert from 'node:assert/strict';
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { generate } from 'otplib';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { buildDeb } from '../../harness/debs.js';
import { buildSourcePackage, type BuiltSource } from '../../harness/source-packages.js';
import { freePort } from '../../harness/net.js';
import { loginAsInitialAdmin, spawnService, waitUntilReady } from '../../harness/service.js';
import { buildAptRepo, makeGpgKey, serveDir, type StaticServer } from '../../harness/upstream.js';
import { makeTempDir } from '../helpers/tmp.js';
import { startFeedServer, writeEpss, writeKev, writeOsvFeed, type FeedServer } from '../security/support.js';

const root = new URL('../..', import.meta.url).pathname;
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const AXE = join(root, 'node_modules', 'axe-core', 'axe.min.js');
const READER_PASSWORD = 'Reader-pass1';
const MFA_PASSWORD = 'Second-factor1';

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/** Serious and critical accessibility violations of the page as it stands, per axe-core. */
async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run(document, { resultTypes: ['violations'] })).violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
}

describe('web interface in a real browser', { skip: !existsSync(CHROMIUM) && `no browser at ${CHROMIUM} (.ci/run installs Debian's chromium)` }, () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let feeds: FeedServer;
  let upstream: StaticServer;
  let service: ChildProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let adminPassword: string;
  let screenshots: string;
  let mfaSecret: string;
  const debs: Record<string, string> = {};
  let source: BuiltSource;
  const accessibility: Record<string, string[]> = {};

  const shoot = async (name: string) => {
    await page.screenshot({ path: join(screenshots, `${name}.png`), fullPage: false });
  };
  const checkAccessibility = async (name: string) => {
    accessibility[name] = await seriousViolations(page);
    assert.deepEqual(accessibility[name], [], `${name}: serious or critical accessibility violations`);
  };
  /** Waits for the page's main heading; on a timeout the error says what the page showed instead. */
  const heading = (text: string | RegExp) => ({
    waitFor: () =>
      page.getByRole('heading', { level: 1, name: text }).waitFor().catch(async (error: Error) => {
        throw new Error(`${error.message}\nthe page at ${page.url()} shows:\n${await page.locator('body').innerText().catch(() => '?')}`);
      }),
  });
  const nav = (text: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: text, exact: true });

  before(async () => {
    if (!existsSync(join(root, 'ui', 'dist', 'index.html'))) {
      await promisify(execFile)('npm', ['run', 'build', '-w', 'ui'], { cwd: root });
    }
    tmp = await makeTempDir('tollgate-ui-e2e-');
    screenshots = process.env.UI_SCREENSHOTS_DIR ? resolve(root, process.env.UI_SCREENSHOTS_DIR) : join(tmp.dir, 'screenshots');
    await mkdir(screenshots, { recursive: true });
    await writeOsvFeed(join(tmp.dir, 'osv.json'), [
      { id: 'DSA-9101-1', ecosystem: 'Debian:12', pkg: 'ui-vulnerable', cves: ['CVE-2026-9101'], fixed: '1.0-2', severity: 'critical' },
      { id: 'DSA-9102-1', ecosystem: 'Debian:12', pkg: 'ui-vulnerable', cves: ['CVE-2026-9102'], severity: 'medium' },
    ]);
    await writeEpss(join(tmp.dir, 'epss.csv.gz'), { 'CVE-2026-9101': 0.42, 'CVE-2026-9102': 0.003 });
    await writeKev(join(tmp.dir, 'kev.json'), ['CVE-2026-9101']);
    feeds = await startFeedServer(tmp.dir);

    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const dataDir = join(tmp.dir, 'data');
    service = spawnService(dataDir, port, { SIGNING_KEY_ALGORITHM: 'ed25519' });
    await waitUntilReady(base, 'the service', 120_000);
    adminPassword = (await import('node:fs')).readFileSync(join(dataDir, 'initial-admin-password'), 'utf8').trim();
    const admin = await loginAsInitialAdmin(base, dataDir);
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: JSON.stringify(body ?? {}) });
      assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${await res.text()}`);
    };
    await api('PATCH', '/settings/', {
      vuln_feeds: [{ name: 'test', url: feeds.url('osv.json'), format: 'osv' }],
      epss_url: feeds.url('epss.csv.gz'),
      kev_url: feeds.url('kev.json'),
    });
    await api('POST', '/import/sync-security');
    const key = await makeGpgKey(join(tmp.dir, 'gpg'));
    await buildAptRepo(join(tmp.dir, 'upstream'), key, [
      { name: 'ui-app', version: '2.0', depends: 'ui-lib (>= 1)' },
      { name: 'ui-lib', version: '1.5' },
    ]);
    upstream = await serveDir(join(tmp.dir, 'upstream'));
    // An account with MFA, enrolled through the API as its owner would.
    await api('POST', '/auth/users', { username: 'ui-mfa', password: MFA_PASSWORD, role: 'maintainer' });
    const own = await (await fetch(`${base}/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'ui-mfa', password: MFA_PASSWORD }) })).json() as { access_token: string };
    const asOwner = (path: string, body: object) => fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${own.access_token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    mfaSecret = ((await (await asOwner('/auth/mfa/setup', { password: MFA_PASSWORD })).json()) as { secret: string }).secret;
    assert.equal((await asOwner('/auth/mfa/enable', { code: await generate({ secret: mfaSecret }) })).status, 200);
    await api('POST', '/import/sources', { name: 'upstream-stable', type: 'apt', url: upstream.url, suite: 'stable', key: key.armoredPublic, distribution: 'bookworm' });
    debs.clean = await buildDeb(tmp.dir, { name: 'ui-clean', version: '1.0-1' });
    debs.vulnerable = await buildDeb(tmp.dir, { name: 'ui-vulnerable', version: '1.0-1' });
    debs.second = await buildDeb(tmp.dir, { name: 'ui-second', version: '1.0-1' });
    debs.secret = await buildDeb(tmp.dir, { name: 'ui-secret', version: '1.0-1' });
    source = await buildSourcePackage(join(tmp.dir, 'source'), { name: 'ui-src', version: '1.0-1', format: '3.0 (quilt)', changes: true });

    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'] });
    // A laptop screen. The service's CSP allows only the interface's own scripts; axe-core is
    // injected by the test, so the page's CSP is bypassed for it alone.
    context = await browser.newContext({ viewport: { width: 1366, height: 768 }, bypassCSP: true });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
  });

  after(async () => {
    await browser?.close();
    service?.kill('SIGTERM');
    await feeds?.close();
    await upstream?.close();
    await tmp?.cleanup();
  });

  it('sends a browser at / to the login page, logs in, and keeps the session over a reload without exposing it to scripts', async () => {
    const answer = await page.goto(`${base}/`);
    assert.equal(new URL(page.url()).pathname, '/ui/');
    assert.equal(answer?.status(), 200);
    await page.getByLabel('Username').fill('admin');
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'Incorrect username' }).waitFor();
    await checkAccessibility('login');
    await shoot('login');
    await page.getByLabel('Password').fill(adminPassword);
    await page.getByRole('button', { name: 'Log in' }).click();
    await heading('Dashboard').waitFor();

    await page.reload();
    await heading('Dashboard').waitFor();
    assert.equal(await page.evaluate(() => document.cookie), '', 'the session cookie is httpOnly');
    assert.equal(await page.evaluate(() => window.localStorage.length + window.sessionStorage.length), 0);
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'tollgate_session');
    assert.ok(session?.httpOnly && session.sameSite === 'Strict');

    // A change made with the cookie alone, as another page's script would, is refused.
    const forged = await page.evaluate(async () => {
      const res = await fetch('/auth/api-tokens', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'forged', role: 'reader' }) });
      return { status: res.status, code: ((await res.json()) as { code: string }).code };
    });
    assert.deepEqual(forged, { status: 403, code: 'csrf_token_invalid' });
  });

  it('runs under the Content-Security-Policy the service sends (no bypass): no violation while logging in and loading the main pages', async () => {
    const strict = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    try {
      await strict.addInitScript(() => {
        const seen: string[] = [];
        (window as unknown as { cspViolations: string[] }).cspViolations = seen;
        document.addEventListener('securitypolicyviolation', (e) => seen.push(`${e.violatedDirective} ${e.blockedURI}`));
      });
      const tab = await strict.newPage();
      const csp = (await tab.goto(`${base}/ui/`))?.headers()['content-security-policy'];
      assert.match(String(csp), /script-src 'self'/);
      await tab.getByLabel('Username').fill('admin');
      await tab.getByLabel('Password').fill(adminPassword);
      await tab.getByRole('button', { name: 'Log in' }).click();
      await tab.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
      for (const path of ['packages', 'review', 'upload', 'settings']) {
        await tab.goto(`${base}/ui/${path}`);
        await tab.getByRole('heading', { level: 1 }).waitFor();
        assert.deepEqual(await tab.evaluate(() => (window as unknown as { cspViolations: string[] }).cspViolations), [], path);
      }
      // The listener does hear a violation: an inline script, as an injection would add, is blocked.
      await tab.evaluate(() => {
        const script = document.createElement('script');
        script.textContent = 'window.injected = true';
        document.body.append(script);
      });
      await tab.waitForFunction(() => (window as unknown as { cspViolations: string[] }).cspViolations.length > 0);
      assert.equal(await tab.evaluate(() => 'injected' in window), false);
    } finally {
      await strict.close();
    }
  });

  it('uploads a package with drag and drop input and shows each pipeline step as it runs', async () => {
    await nav('Upload').click();
    await heading('Upload a package').waitFor();
    await checkAccessibility('upload-empty');
    // Record the pipeline list each time the page changes it, to see the progress arrive live.
    await page.evaluate(() => {
      const snapshots: string[][] = [];
      (window as unknown as { snapshots: string[][] }).snapshots = snapshots;
      new MutationObserver(() => {
        const states = [...document.querySelectorAll('li[data-step]')].map((li) => `${li.getAttribute('data-step')}:${li.getAttribute('data-state')}`);
        if (states.length && states.join() !== snapshots.at(-1)?.join()) snapshots.push(states);
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
    });
    await page.locator('#upload-file').setInputFiles(debs.clean!);
    await page.getByLabel('Distribution').selectOption('bookworm');
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('heading', { name: /Result:/ }).filter({ hasText: 'published' }).waitFor();
    const snapshots = await page.evaluate(() => (window as unknown as { snapshots: string[][] }).snapshots);
    const steps = ['format', 'provenance', 'antivirus', 'cve', 'signature', 'dependencies'];
    assert.deepEqual(snapshots[0], steps.map((s) => `${s}:waiting`), 'the steps are listed before the first one runs');
    assert.deepEqual(snapshots.at(-1), steps.map((s) => `${s}:finished`));
    const partial = snapshots.filter((list) => list.some((s) => s.endsWith(':finished')) && list.some((s) => !s.endsWith(':finished')));
    assert.ok(partial.length > 0, `the page showed the pipeline part way through: ${JSON.stringify(snapshots)}`);
    for (const list of snapshots) {
      // A step is never shown finished after one that is still waiting: they run in order.
      const firstUnfinished = list.findIndex((s) => !s.endsWith(':finished'));
      if (firstUnfinished !== -1) assert.ok(list.slice(firstUnfinished + 1).every((s) => s.endsWith(':waiting') || s.endsWith(':started')), JSON.stringify(list));
    }
    await checkAccessibility('upload');
    await shoot('upload');
  });

  it('uploads a set of files dropped together: a source package (.changes with the files it names) and a .deb, each with its own steps', async () => {
    assert.ok(source.changes);
    // Dropped, as a file manager's selection would be: the files' bytes in a DataTransfer.
    const set = await Promise.all([debs.second!, source.changes!, source.dsc, ...source.files].map(async (path) => ({ name: basename(path), data: (await readFile(path)).toString('base64') })));
    const transfer = await page.evaluateHandle((files) => {
      const dt = new DataTransfer();
      for (const f of files) dt.items.add(new File([Uint8Array.from(atob(f.data), (c) => c.charCodeAt(0))], f.name));
      return dt;
    }, set);
    await page.locator('.dropzone').dispatchEvent('drop', { dataTransfer: transfer });
    const plan = page.getByText(/^2 uploads of \d+ files:/);
    await plan.waitFor();
    assert.equal(await plan.innerText(), `2 uploads of ${3 + source.files.length} files:`);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    for (const name of [basename(source.changes!), basename(debs.second!)]) {
      const run = page.getByRole('region', { name: `Pipeline of ${name}` });
      await run.getByRole('heading', { name: /Result:/ }).filter({ hasText: 'published' }).waitFor();
    }
    // The source package is in the index with every file it named.
    const sources = await fetch(`${base}/repo/apt/dists/bookworm/main/source/Sources`);
    assert.equal(sources.status, 200);
    const stanza = await sources.text();
    assert.match(stanza, /^Package: ui-src$/m);
    for (const file of [source.dsc, ...source.files]) assert.ok(stanza.includes(basename(file)), `${file} in Sources`);
    await checkAccessibility('upload-several');
  });

  it('holds a vulnerable package for review; accepting the risk with a justification publishes it', async () => {
    await page.locator('#upload-file').setInputFiles(debs.vulnerable!);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('heading', { name: /Result:/ }).filter({ hasText: 'pending review' }).waitFor();

    await nav('Review queue').click();
    await heading('Review queue').waitFor();
    const row = page.getByRole('row').filter({ hasText: 'ui-vulnerable' });
    await row.waitFor();
    assert.match(await row.innerText(), /KEV/);
    assert.match(await row.innerText(), /42\.0%/);
    await checkAccessibility('review-queue');
    await shoot('review-queue');

    await row.getByRole('button', { name: /Decide on ui-vulnerable/ }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Record decision' }).click();
    await dialog.getByText('A justification is required').waitFor();
    await dialog.getByLabel(/Exception/).check();
    await dialog.getByLabel(/Justification/).fill('Only reachable through the admin CLI; vendor fix scheduled for next sprint');
    await dialog.getByRole('button', { name: 'Record decision' }).click();
    await dialog.getByText('An exception needs an expiry').waitFor();
    await checkAccessibility('decide-dialog');
    await shoot('decide-dialog');
    await dialog.getByLabel(/Accept the risk/).check();
    await dialog.getByRole('button', { name: 'Record decision' }).click();
    await page.getByText('Nothing awaits review.').waitFor();

    await page.goto(`${base}/ui/packages/ui-vulnerable`);
    await heading(/ui-vulnerable/).waitFor();
    const versions = page.getByRole('region', { name: 'Versions' });
    await versions.getByText('accepted risk').waitFor();
    await page.getByRole('region', { name: 'Decision history' }).getByText(/accept_risk/).waitFor();
    await page.getByRole('region', { name: 'Findings' }).getByText('CVE-2026-9101').waitFor();
    await page.getByRole('region', { name: 'Install' }).getByText(/apt/).first().waitFor();
    assert.equal(await versions.getByRole('button', { name: 'Delete 1.0-1 in bookworm' }).count(), 1, 'an admin is offered the maintainer actions');
    await checkAccessibility('package');
    await shoot('package');

    // Published: the signed index lists it.
    const packages = await fetch(`${base}/repo/apt/dists/bookworm/main/binary-amd64/Packages`);
    assert.equal(packages.status, 200);
    assert.match(await packages.text(), /^Package: ui-vulnerable$/m);

    await nav('Dashboard').click();
    await heading('Dashboard').waitFor();
    await page.getByRole('img', { name: /Uploads per day/ }).waitFor();
    // The service's own health report: its database answers, no Redis is configured here.
    const health = page.getByRole('region', { name: 'Service health' });
    await health.getByRole('row', { name: /^Database ok dialect sqlite/ }).waitFor();
    await health.getByRole('row', { name: /^Redis \(shared rate limits\) not configured/ }).waitFor();
    await checkAccessibility('dashboard');
    await shoot('dashboard');
    await nav('Packages').click();
    await page.getByRole('link', { name: 'ui-clean' }).waitFor();
    await checkAccessibility('packages');
    await shoot('packages');

    // The status filter is the service's: the count is of the matching versions, not of a page.
    await page.getByLabel('Status').selectOption('accepted_risk');
    await page.getByText('1 package versions accepted risk').waitFor();
    assert.equal(await page.getByRole('link', { name: 'ui-vulnerable' }).count(), 1);
    assert.equal(await page.getByRole('link', { name: 'ui-clean' }).count(), 0);
    assert.match(page.url(), /status=accepted_risk/);
  });

  it('creates and edits a private distribution, and reads it with a read token made from a package page', async () => {
    await nav('Distributions').click();
    await heading('Distributions').waitFor();
    const form = page.getByRole('form', { name: 'New distribution' });
    await form.getByLabel('Codename').fill('ui-private');
    await form.getByLabel('Description').fill('Team packages');
    await form.getByLabel(/^Private/).check();
    await form.getByRole('button', { name: 'Create distribution' }).click();
    const row = page.getByRole('row').filter({ hasText: 'ui-private' });
    await row.getByText('Team packages').waitFor();
    assert.match(await row.innerText(), /private/);
    await row.getByRole('button', { name: 'Edit ui-private' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Description').fill('Team A packages');
    await checkAccessibility('distribution-edit');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await row.getByText('Team A packages').waitFor();
    assert.equal(await row.getByRole('link', { name: 'SPDX SBOM of ui-private' }).count(), 1);
    // The export links work with the session alone, and the documents name the packages published.
    for (const [format, field] of [['CycloneDX', 'bomFormat'], ['SPDX', 'spdxVersion']] as const) {
      const href = await page.getByRole('link', { name: `${format} SBOM of bookworm` }).getAttribute('href');
      const sbom = await page.request.get(`${base}${href}`);
      assert.equal(sbom.status(), 200, `${href}: ${await sbom.text()}`);
      const text = await sbom.text();
      assert.ok(field in JSON.parse(text), `${format}: ${text.slice(0, 200)}`);
      assert.match(text, /ui-clean/);
    }
    await checkAccessibility('distributions-admin');
    await page.evaluate(() => window.scrollTo(0, 0));
    await shoot('distributions');

    await nav('Upload').click();
    await page.locator('#upload-file').setInputFiles(debs.secret!);
    await page.getByLabel('Distribution').selectOption('ui-private');
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByRole('heading', { name: /Result:/ }).filter({ hasText: 'published' }).waitFor();

    await page.goto(`${base}/ui/packages/ui-secret`);
    const install = page.getByRole('region', { name: 'Install' });
    await install.getByText(/ui-private is private/).waitFor();
    await install.getByRole('link', { name: 'Create a read token for ui-private' }).click();
    await heading('API tokens').waitFor();
    assert.equal(await page.getByLabel(/^ui-private/).isChecked(), true, 'the distribution comes preselected');
    assert.equal(await page.getByLabel(/^bookworm/).isChecked(), false);
    await page.getByLabel('Name').fill('team-a-hosts');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.getByTestId('new-token').innerText()).trim();
    assert.match(token, /^tg_r_/);
    await page.getByRole('row').filter({ hasText: 'team-a-hosts' }).getByText('reads ui-private').waitFor();
    await checkAccessibility('tokens-read');

    const basic = { authorization: `Basic ${Buffer.from(`apt:${token}`).toString('base64')}` };
    const index = `${base}/repo/apt/dists/ui-private/main/binary-amd64/Packages`;
    assert.equal((await fetch(index)).status, 401, 'private without a credential');
    const packages = await fetch(index, { headers: basic });
    assert.equal(packages.status, 200, 'the read token reads it');
    const filename = /^Filename: (\S+)$/m.exec(await packages.text())![1]!;
    assert.equal((await fetch(`${base}/repo/apt/${filename}`, { headers: basic })).status, 200);
    assert.equal((await fetch(`${base}/auth/me`, { headers: { authorization: `Bearer ${token}` } })).status, 403, 'a read token does not call the API');

    // The download made with it is in the statistics, credited to the token.
    await nav('Downloads').click();
    await heading('Downloads').waitFor();
    const byToken = page.getByRole('region', { name: 'By token' });
    for (let tries = 0; (await byToken.getByRole('row').filter({ hasText: 'team-a-hosts' }).count()) === 0; tries++) {
      assert.ok(tries < 20, `the download is not counted: ${await page.locator('main').innerText()}`);
      await page.waitForTimeout(500);
      await page.reload();
      await heading('Downloads').waitFor();
    }
    assert.match(await byToken.getByRole('row').filter({ hasText: 'team-a-hosts' }).innerText(), /\bread\b.*\b1$/s);
    await checkAccessibility('downloads');
    await shoot('downloads');
  });

  it('synchronises an upstream source, previews a package with its dependencies and imports them with progress', async () => {
    await nav('Import').click();
    await heading('Import').waitFor();
    const source = page.getByRole('row').filter({ hasText: 'upstream-stable' });
    await source.getByRole('button', { name: /^Sync / }).click();
    await source.getByText('success').waitFor();
    assert.match(await source.innerText(), /\bsuccess\s+2\b/, 'two packages in the catalog');
    await page.getByLabel('Package', { exact: true }).fill('ui-app');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('button', { name: 'Preview ui-app 2.0' }).click();
    const preview = page.getByRole('region', { name: /ui-app 2.0: 2 packages to import/ });
    await preview.getByText(/ui-lib 1.5/).waitFor();
    await preview.getByRole('button', { name: 'Import 2 packages' }).click();
    await page.getByText('2 of 2 packages').waitFor();
    await page.getByText(/Done: group/).waitFor();
    assert.equal(await page.locator('#import-progress').getAttribute('value'), '2');
    await checkAccessibility('import');
    await shoot('import');
  });

  it('creates a user and an API token shown once', async () => {
    await nav('Users').click();
    await heading('Users').waitFor();
    await page.getByLabel('Username').fill('ui-reader');
    await page.getByLabel('Full name').fill('Rita Reader');
    await page.getByLabel('Role', { exact: true }).selectOption('reader');
    await page.getByLabel('Initial password').fill(READER_PASSWORD);
    await page.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('row').filter({ hasText: 'Rita Reader' }).waitFor();
    await checkAccessibility('users');
    await shoot('users');

    await nav('API tokens').click();
    await heading('API tokens').waitFor();
    await page.getByLabel('Name').fill('ci-pipeline');
    await page.getByLabel('Role', { exact: true }).selectOption('uploader');
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = page.getByTestId('new-token');
    await shown.waitFor();
    const token = (await shown.innerText()).trim();
    assert.match(token, /^tg_/);
    const me = await fetch(`${base}/auth/me`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.status, 200, 'the token shown works');
    await page.getByRole('row').filter({ hasText: 'ci-pipeline' }).waitFor();
    await checkAccessibility('tokens');
    await shoot('tokens');
    await page.reload();
    await page.getByRole('row').filter({ hasText: 'ci-pipeline' }).waitFor();
    assert.equal(await page.getByText(token).count(), 0, 'the token is shown once only');
  });

  it('shows the audit log with a verified chain, the distributions and the settings, all accessible', async () => {
    await nav('Audit log').click();
    await heading('Audit log').waitFor();
    await page.getByRole('row').filter({ hasText: 'SECURITY DECISION' }).first().waitFor();
    await page.getByRole('button', { name: 'Verify the hash chain' }).click();
    await page.getByText(/^Intact: \d+ entries/).waitFor();
    await checkAccessibility('audit');
    await shoot('audit');
    await nav('Distributions').click();
    await heading('Distributions').waitFor();
    await page.getByRole('row').filter({ hasText: 'bookworm' }).first().waitFor();
    await checkAccessibility('distributions');
    await nav('Settings').click();
    await heading('Settings').waitFor();
    await page.getByRole('heading', { name: 'Repository signing key' }).waitFor();
    await page.locator('dl.facts').getByText(/[0-9A-F]{40}/i).waitFor();
    await checkAccessibility('settings');
    await shoot('settings');
  });

  it('offers a reader no upload or decide action', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('button', { name: 'Log in' }).waitFor();
    assert.equal((await context.cookies()).find((c) => c.name === 'tollgate_session'), undefined, 'the cookie is gone');
    await page.getByLabel('Username').fill('ui-reader');
    await page.getByLabel('Password').fill(READER_PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await heading('Dashboard').waitFor();
    const links = await page.getByRole('navigation', { name: 'Main' }).getByRole('link').allInnerTexts();
    assert.deepEqual(links, ['Dashboard', 'Packages', 'Distributions', 'Import', 'Downloads']);
    await page.goto(`${base}/ui/upload`);
    await page.getByText('does not give access').waitFor();
    assert.equal(await page.locator('#upload-file').count(), 0);
    await page.goto(`${base}/ui/packages/ui-vulnerable`);
    await heading(/ui-vulnerable/).waitFor();
    assert.equal(await page.getByRole('button', { name: /Decide/ }).count(), 0);
    assert.equal(await page.getByRole('region', { name: 'Decision history' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^(Rescan|Quarantine|Delete) / }).count(), 0, 'nor rescan, quarantine or delete');
    await page.goto(`${base}/ui/import`);
    await heading('Import').waitFor();
    assert.equal(await page.getByRole('button', { name: /^Sync / }).count(), 0, 'a reader cannot synchronise');
    await page.goto(`${base}/ui/review`);
    await page.getByText('does not give access').waitFor();
    assert.equal(await page.getByRole('button', { name: /Decide/ }).count(), 0);
    // A private distribution's install commands: told to ask for a read token, not linked to a page it cannot open.
    await page.goto(`${base}/ui/packages/ui-secret`);
    await page.getByRole('region', { name: 'Install' }).getByText(/Ask an uploader/).waitFor();
    await page.goto(`${base}/ui/distributions`);
    await page.getByRole('row').filter({ hasText: 'ui-private' }).waitFor();
    assert.equal(await page.getByRole('form', { name: 'New distribution' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: /^(Edit|Retire) / }).count(), 0);
    assert.equal(await page.getByRole('link', { name: /SBOM of/ }).count(), 0);
    await page.goto(`${base}/ui/downloads`);
    await heading('Downloads').waitFor();
    await page.getByRole('region', { name: 'By your tokens' }).waitFor();
    assert.equal(await page.getByRole('row').filter({ hasText: 'team-a-hosts' }).count(), 0, 'a reader sees no one else\'s tokens');
  });

  it('asks for the code of an account with MFA, and works by keyboard alone', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Username').focus();
    await page.keyboard.type('ui-mfa');
    await page.keyboard.press('Tab');
    await page.keyboard.type(MFA_PASSWORD);
    await page.keyboard.press('Enter');
    const code = page.getByLabel('Authentication code');
    await code.waitFor();
    assert.equal(await code.evaluate((el) => el === document.activeElement), true, 'the code field has the focus');
    await checkAccessibility('mfa');
    await page.keyboard.type('000000');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'Incorrect' }).waitFor();
    await code.fill('');
    await code.focus();
    await page.keyboard.type(await generate({ secret: mfaSecret }));
    await page.keyboard.press('Enter');
    await heading('Dashboard').waitFor();
    assert.ok(await page.getByText('ui-mfa (maintainer)').isVisible());
    // The skip link is the first stop of the keyboard and moves it to the page's content.
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
  });

  it('keeps the screenshots small', async () => {
    const { statSync } = await import('node:fs');
    const files = (await readdir(screenshots)).filter((f) => f.endsWith('.png'));
    assert.ok(files.length >= 12, files.join(' '));
    for (const file of files) assert.ok(statSync(join(screenshots, file)).size < 400_000, `${file} is over 400 kB`);
  });
});
