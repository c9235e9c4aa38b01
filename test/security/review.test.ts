/**
 * The whole security review flow on real packages (.rpm from rpmbuild, .deb from dpkg-deb) and a
 * local feed server, on both database backends: upload outcomes by policy and KEV, binNMU and
 * source-name matching, listings, the review queue order, every decide alias and 4xx, the
 * effects on the signed indexes under DATA_DIR/repo, rescans after a feed change, quarantine,
 * the CVE policy endpoint, expiry and SLA jobs, webhook signatures and e-mails.
 */
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb } from '../../harness/debs.js';
import { buildRpm } from '../../harness/rpms.js';
import { startSmtpServer, type TestSmtpServer } from '../helpers/smtp.js';
import { makeTempDir } from '../helpers/tmp.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.js';
import { runExpiry, runSlaWarnings } from '../../src/services/security/scheduled.js';
import { aptIndexNames, filesUnder, patchSettings, rpmIndexNames, startFeedServer, upload, writeEpss, writeKev, writeOsvFeed, type AdvisorySpec, type FeedServer } from './support.js';

const ROCKY = 'Rocky Linux:9';
const SECRET = 'webhook-test-secret';
const DAY = 86_400_000;

const baseAdvisories: AdvisorySpec[] = [
  { id: 'RLSA-2024:1001', ecosystem: ROCKY, pkg: 'critpkg', cves: ['CVE-2024-1001'], fixed: '1.0-2', severity: 'critical' },
  { id: 'RLSA-2024:1002', ecosystem: ROCKY, pkg: 'highpkg', cves: ['CVE-2024-1002'], fixed: '1.0-2', severity: 'high' },
  { id: 'RLSA-2024:1003', ecosystem: ROCKY, pkg: 'kevpkg', cves: ['CVE-2024-1003'], fixed: '1.0-2', severity: 'low' },
  { id: 'RLSA-2024:1004', ecosystem: ROCKY, pkg: 'warnpkg', cves: ['CVE-2024-1004'], fixed: '1.0-2', severity: 'medium' },
  { id: 'RLSA-2024:1005', ecosystem: ROCKY, pkg: 'twoarch', cves: ['CVE-2024-1005'], fixed: '1.0-2', severity: 'high' },
  { id: 'RLSA-2024:1006', ecosystem: ROCKY, pkg: 'blockpkg', cves: ['CVE-2024-1006'], fixed: '1.0-2', severity: 'low' },
  // Debian names source packages: `foo` builds libfoo1; the binNMU 1.2-3+b1 is source 1.2-3.
  { id: 'DSA-5999-1', ecosystem: 'Debian:12', pkg: 'foo', cves: ['CVE-2024-1010'], fixed: '1.2-4', severity: 'critical' },
  // Fixed in source 1.0-1: the binNMU 1.0-1+b2 of it is not affected.
  { id: 'DSA-5998-1', ecosystem: 'Debian:12', pkg: 'bar', cves: ['CVE-2024-1011'], fixed: '1.0-1', severity: 'critical' },
];

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function verifySignature(receiver: WebhookReceiver): void {
  assert.ok(receiver.requests.length > 0, 'webhooks were delivered');
  for (const r of receiver.requests) {
    const expected = `sha256=${createHmac('sha256', SECRET).update(r.body).digest('hex')}`;
    assert.equal(r.headers['x-tollgate-signature'], expected, 'X-Tollgate-Signature is the HMAC of the body');
  }
}

function events(receiver: WebhookReceiver): Json[] {
  return receiver.requests.map((_, i) => receiver.json(i) as Json);
}

for (const backend of backends()) {
  describe(`security review flow (${backend})`, () => {
    let app: TestApp;
    let admin: string;
    let maintainer: string;
    let tmp: { dir: string; cleanup: () => Promise<void> };
    let feeds: FeedServer;
    let hook: WebhookReceiver;
    let smtp: TestSmtpServer;
    const pkgs: Record<string, string> = {};

    const get = async (url: string, token = admin) => {
      const res = await app.app.inject({ method: 'GET', url, headers: bearer(token) });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      return res.json() as Json;
    };
    const post = (url: string, payload?: unknown, token = admin) =>
      app.app.inject({ method: 'POST', url, headers: bearer(token), ...(payload === undefined ? {} : { payload: payload as object }) });
    const statusOf = async (name: string, version: string) => (await get(`/security/packages/${name}/${version}/cve`)).packages.map((p: Json) => p.status);
    const settle = () => app.ctx.notifier.idle(10_000);

    before(async () => {
      tmp = await makeTempDir('tollgate-review-');
      app = await startTestApp({ backend });
      admin = await app.tokenFor('admin');
      maintainer = await app.tokenFor('maintainer');
      hook = await startWebhookReceiver();
      smtp = await startSmtpServer();
      await writeOsvFeed(join(tmp.dir, 'osv.json'), baseAdvisories);
      await writeEpss(join(tmp.dir, 'epss.csv.gz'), { 'CVE-2024-1001': 0.5, 'CVE-2024-1010': 0.3, 'CVE-2024-1002': 0.1, 'CVE-2024-1003': 0.01 });
      await writeKev(join(tmp.dir, 'kev.json'), ['CVE-2024-1003']);
      feeds = await startFeedServer(tmp.dir);
      await patchSettings(app, admin, {
        vuln_feeds: [{ name: 'test', url: feeds.url('osv.json'), format: 'osv' }],
        epss_url: feeds.url('epss.csv.gz'),
        kev_url: feeds.url('kev.json'),
        webhook_enabled: true,
        webhook_url: hook.url,
        webhook_secret: SECRET,
        smtp_host: smtp.host,
        smtp_port: smtp.port,
        smtp_tls: 'none',
        smtp_from: 'tollgate@example.test',
        notify_emails: ['security@example.test'],
        app_url: 'https://tollgate.example.test',
      });
      const sync = await post('/import/sync-security');
      assert.equal(sync.statusCode, 200, sync.body);
      const out = join(tmp.dir, 'pkgs');
      const rpm = (name: string, arch: 'x86_64' | 'noarch' = 'x86_64') => buildRpm(out, { name, version: '1.0', release: '1', arch, payloadCompression: 'gzip' });
      for (const name of ['critpkg', 'highpkg', 'kevpkg', 'warnpkg', 'cleanpkg', 'blockpkg']) pkgs[name] = await rpm(name);
      pkgs.twoarch = await rpm('twoarch');
      pkgs.twoarchNoarch = await rpm('twoarch', 'noarch');
      pkgs.libfoo1 = await buildDeb(out, { name: 'libfoo1', version: '1.2-3+b1', source: 'foo', compression: 'gzip' });
      pkgs.libbar1 = await buildDeb(out, { name: 'libbar1', version: '1.0-1+b2', source: 'bar', compression: 'gzip' });
    });

    after(async () => {
      await app.close();
      await feeds.close();
      await hook.close();
      await smtp.close();
      await tmp.cleanup();
    });

    it('uploads end published, with warnings, or pending_review by policy, KEV and source matching', async () => {
      const results: Record<string, Json> = {};
      for (const [key, dist] of [['critpkg', 'rocky9'], ['libfoo1', 'bookworm'], ['highpkg', 'rocky9'], ['twoarch', 'rocky9'], ['twoarchNoarch', 'rocky9'], ['kevpkg', 'rocky9'], ['warnpkg', 'rocky9'], ['cleanpkg', 'rocky9'], ['libbar1', 'bookworm']] as const) {
        const res = await upload(app, admin, pkgs[key]!, dist);
        assert.equal(res.statusCode, 201, `${key}: ${res.body}`);
        results[key] = res.json() as Json;
      }
      assert.equal(results.critpkg!.status, 'pending_review');
      assert.equal(results.critpkg!.pipeline.cve_scan, 'pending_review');
      assert.deepEqual(results.critpkg!.reasons, ['cve: CVE-2024-1001 critical (policy review)']);
      assert.equal(results.critpkg!.findings.critical, 1);
      assert.equal(results.libfoo1!.status, 'pending_review', 'matched by its source name, binNMU stripped');
      assert.equal(results.highpkg!.status, 'pending_review');
      assert.equal(results.kevpkg!.status, 'pending_review', 'a low CVE listed in KEV is held for review');
      assert.deepEqual(results.kevpkg!.reasons, ['cve: CVE-2024-1003 low (KEV, policy review)']);
      assert.equal(results.warnpkg!.status, 'published');
      assert.equal(results.warnpkg!.cve_status, 'warnings');
      assert.equal(results.cleanpkg!.status, 'published');
      assert.equal(results.cleanpkg!.pipeline.cve_scan, 'no_findings');
      assert.equal(results.libbar1!.status, 'published', 'source 1.0-1 is the fixed version');
      assert.equal(results.libbar1!.pipeline.cve_scan, 'no_findings');

      assert.deepEqual(await rpmIndexNames(app.dataDir, 'rocky9'), ['cleanpkg', 'warnpkg']);
      assert.deepEqual(await aptIndexNames(app.dataDir, 'bookworm'), ['libbar1']);

      await settle();
      const pending = events(hook).filter((e) => e.event === 'package.pending_review');
      assert.deepEqual(pending.map((e) => e.data.name).sort(), ['critpkg', 'highpkg', 'kevpkg', 'libfoo1', 'twoarch', 'twoarch']);
      assert.deepEqual(pending.find((e) => e.data.name === 'critpkg')!.data.cve_ids, ['CVE-2024-1001']);
      verifySignature(hook);
      const critMail = smtp.messages.find((m) => m.subject?.includes('critpkg 1.0-1') && m.subject.includes('waiting for a security review') && m.to.includes('security@example.test'));
      assert.ok(critMail);
      // Links follow the runtime app_url setting, not the APP_URL the process started with.
      assert.match(critMail.raw, /Review queue: https:\/\/tollgate\.example\.test\/security\/review-queue/);
    });

    it('lists vulnerabilities, posture, packages by status and severity, and one version\'s CVEs', async () => {
      const critical = await get('/security/packages?severity=critical', maintainer);
      assert.deepEqual(critical.items.map((p: Json) => p.name).sort(), ['critpkg', 'libfoo1']);
      assert.equal(critical.total, 2);
      const pending = await get('/security/packages?status=pending_review&per_page=2&page=1', maintainer);
      assert.equal(pending.total, 6);
      assert.equal(pending.items.length, 2);
      assert.equal(pending.pages, 3);
      const medium = await get('/security/packages?severity=medium&status=published', maintainer);
      assert.deepEqual(medium.items.map((p: Json) => p.name), ['warnpkg']);
      const forbidden = await app.app.inject({ method: 'GET', url: '/security/packages', headers: bearer(await app.tokenFor('auditor')) });
      assert.equal(forbidden.statusCode, 403);

      const reader = await app.tokenFor('reader');
      const vulns = await get('/security/vulnerabilities', reader);
      assert.equal(vulns.total, 6);
      assert.deepEqual(vulns.items.slice(0, 2).map((v: Json) => v.cve_id), ['CVE-2024-1001', 'CVE-2024-1010'], 'critical first, then by EPSS');
      const twoarch = vulns.items.find((v: Json) => v.cve_id === 'CVE-2024-1005');
      assert.equal(twoarch.package_count, 2);
      assert.equal(twoarch.severity, 'high');
      const kev = vulns.items.find((v: Json) => v.cve_id === 'CVE-2024-1003');
      assert.equal(kev.in_kev, true);
      assert.equal((await get('/security/vulnerabilities?severity=high', reader)).total, 2);
      // Enumerated filters ignore case, as people type them; answers keep the lower-case spelling.
      assert.deepEqual((await get('/security/packages?severity=Critical&status=PENDING_REVIEW', maintainer)).items.map((p: Json) => p.name).sort(), ['critpkg', 'libfoo1']);
      assert.equal((await get('/security/vulnerabilities?severity=HIGH', reader)).items[0].severity, 'high');
      const bogus = await app.app.inject({ method: 'GET', url: '/security/vulnerabilities?severity=Dire', headers: bearer(reader) });
      assert.equal(bogus.statusCode, 422);
      assert.equal(bogus.json().code, 'validation_error');

      const posture = await get('/security/packages-posture', reader);
      assert.equal(posture.by_status.pending_review, 6);
      assert.equal(posture.by_status.published, 3);
      assert.equal(posture.packages_by_worst_severity.critical, 2);
      assert.equal(posture.kev.packages, 1);
      assert.equal(posture.vulnerability_database.configured, true);

      const cve = await get('/security/packages/critpkg/1.0-1/cve', reader);
      const finding = cve.findings[0];
      assert.equal(finding.cve_id, 'CVE-2024-1001');
      assert.equal(finding.severity, 'critical');
      assert.equal(finding.cvss_score, 9.8);
      assert.equal(finding.epss, 0.5);
      assert.equal(finding.in_kev, false);
      assert.equal(finding.fix_state, 'fixed');
      assert.equal(finding.fixed_version, '1.0-2');
      assert.equal(finding.sla_remaining_days, 7);
      assert.equal((await app.app.inject({ method: 'GET', url: '/security/packages/nope/1/cve', headers: bearer(reader) })).statusCode, 404);
    });

    it('orders the review queue KEV → EPSS → CVSS, or by SLA deadline', async () => {
      const auditor = await app.tokenFor('auditor');
      const queue = await get('/security/review-queue', auditor);
      assert.equal(queue.total, 6);
      assert.deepEqual(queue.items.map((i: Json) => i.name), ['kevpkg', 'critpkg', 'libfoo1', 'highpkg', 'twoarch', 'twoarch']);
      const first = queue.items[0];
      assert.deepEqual(first.held_because, ['CVE-2024-1003 low (KEV): policy review']);
      assert.equal(first.findings[0].sla_remaining_days, 180);
      const bySla = await get('/api/security/review-queue?sort=sla', auditor);
      assert.deepEqual(bySla.items.map((i: Json) => i.name), ['critpkg', 'libfoo1', 'highpkg', 'twoarch', 'twoarch', 'kevpkg']);
      const denied = await app.app.inject({ method: 'GET', url: '/security/review-queue', headers: bearer(await app.tokenFor('uploader')) });
      assert.equal(denied.statusCode, 403);
    });

    it('refuses bad decisions with the DECISIONS §5 codes', async () => {
      const cases: Array<[string, unknown, number, string]> = [
        ['/security/packages/nope/1.0-1/decide', { action: 'accept_risk', justification: 'x' }, 404, 'package_not_found'],
        ['/security/packages/cleanpkg/1.0-1/decide', { action: 'accept_risk', justification: 'x' }, 409, 'not_in_review'],
        ['/security/packages/critpkg/1.0-1/decide', { action: 'maybe', justification: 'x' }, 422, 'invalid_action'],
        ['/security/packages/critpkg/1.0-1/decide', { action: 'accept_risk', justification: '   ' }, 422, 'justification_required'],
        ['/security/packages/critpkg/1.0-1/decide', { action: 'accept_risk' }, 422, 'justification_required'],
        ['/security/packages/critpkg/1.0-1/decide', { action: 'exception', justification: 'x' }, 422, 'expiry_required'],
        ['/security/packages/critpkg/1.0-1/decide', { action: 'exception', justification: 'x', expires_in_days: 0 }, 422, 'expiry_invalid'],
        ['/security/packages/critpkg/1.0-1/decide', { action: 'reject', justification: 'x', expires_days: 5 }, 422, 'expiry_not_allowed'],
        ['/security/packages/critpkg/1.0-1/decide', { action: 'upgrade_required', justification: 'x' }, 422, 'target_version_required'],
        ['/security/packages/twoarch/1.0-1/decide', { action: 'accept_risk', justification: 'x' }, 422, 'arch_required'],
      ];
      for (const [url, body, status, code] of cases) {
        const res = await post(url, body);
        assert.equal(res.statusCode, status, `${url} ${JSON.stringify(body)}: ${res.body}`);
        assert.equal(res.json().code, code);
      }
      const byMaintainer = await post('/security/packages/critpkg/1.0-1/decide', { action: 'accept_risk', justification: 'x' }, maintainer);
      assert.equal(byMaintainer.statusCode, 403, 'decide is admin-only by default');
      assert.deepEqual(await statusOf('critpkg', '1.0-1'), ['pending_review']);
    });

    it('applies each decide alias: accepted risk and exception enter the signed index, reject quarantines, upgrade_required withholds', async () => {
      let res = await post('/security/packages/critpkg/1.0-1/decide', { decision: 'approve', justification: 'not reachable in our build' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'accepted_risk');
      assert.equal(res.json().decision.covered_cve_ids[0], 'CVE-2024-1001');

      res = await post('/security/packages/highpkg/1.0-1/decision', { action: 'exception', justification: 'vendor fix pending', expires_in_days: 30 });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'exception');
      const exceptionExpiry = res.json().decision.expires_at as string;
      assert.ok(Math.abs(Date.parse(exceptionExpiry) - (Date.now() + 30 * DAY)) < 60_000);

      res = await post('/api/v1/security/packages/libfoo1/1.2-3+b1/decide', { decision: 'accepted', comment: 'accepted for one day', expiry_days: '1' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'accepted_risk');

      res = await post('/security/packages/kevpkg/1.0-1/decide', { action: 'reject', justification: 'actively exploited' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'quarantined');

      await patchSettings(app, admin, { decide_min_role: 'maintainer' });
      res = await post('/security/packages/twoarch/1.0-1/decide?arch=x86_64', { action: 'upgrade_required', target_version: '1.0-2', justification: 'fixed upstream' }, maintainer);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'upgrade_required');
      assert.ok(Math.abs(Date.parse(res.json().sla_deadline) - (Date.now() + 30 * DAY)) < 60_000, 'SLA of the worst severity (high: 30 days)');
      res = await post('/security/packages/twoarch/1.0-1/decision', { decision: 'rejected', comment: 'no noarch build', arch: 'noarch' }, maintainer);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'quarantined');
      await patchSettings(app, admin, { decide_min_role: 'admin' });

      // One record per name/version/arch, upserted.
      res = await post('/security/packages/critpkg/1.0-1/decide', { action: 'accept_risk', justification: 'reviewed again', expires_in_days: 90 });
      assert.equal(res.statusCode, 200, res.body);
      const records = await app.ctx.db.selectFrom('security_decisions').selectAll().where('name', '=', 'critpkg').execute();
      assert.equal(records.length, 1);
      assert.equal(records[0]!.justification, 'reviewed again');

      assert.deepEqual(await rpmIndexNames(app.dataDir, 'rocky9'), ['cleanpkg', 'critpkg', 'highpkg', 'warnpkg']);
      assert.deepEqual(await aptIndexNames(app.dataDir, 'bookworm'), ['libbar1', 'libfoo1']);
      const quarantined = await filesUnder(join(app.dataDir, 'quarantine'));
      const kevRow = await app.ctx.db.selectFrom('packages').select('sha256').where('name', '=', 'kevpkg').executeTakeFirstOrThrow();
      assert.ok(quarantined.includes(kevRow.sha256), 'rejected file moved to the quarantine area');
      assert.ok(!(await filesUnder(join(app.dataDir, 'store'))).includes(kevRow.sha256));
      assert.ok(!(await filesUnder(join(app.dataDir, 'repo'))).some((f) => f.startsWith('kevpkg')));

      const audit = await get('/audit/logs?action=SECURITY_DECISION&per_page=20');
      const details = audit.items.map((e: Json) => e.detail as string);
      assert.ok(details.includes('action=accept_risk; justification="not reachable in our build"; expiry=never'));
      assert.ok(details.includes(`action=exception; justification="vendor fix pending"; expiry=${exceptionExpiry}`));
      assert.ok(details.includes('action=reject; justification="actively exploited"; expiry=never'));

      await settle();
      const decisions = events(hook).filter((e) => e.event === 'package.decision');
      assert.ok(decisions.some((e) => e.data.name === 'kevpkg' && e.data.action === 'reject' && e.data.status === 'quarantined'));
      verifySignature(hook);
      assert.ok(smtp.messages.some((m) => m.subject?.includes('highpkg') && m.subject.includes('exception')));
      // Deciding on a quarantined package: 409.
      assert.equal((await post('/security/packages/kevpkg/1.0-1/decide', { action: 'accept_risk', justification: 'x' })).statusCode, 409);
    });

    it('rescans after the feed changes: new CVEs take packages out of the index, covered ones do not', async () => {
      await writeOsvFeed(join(tmp.dir, 'osv.json'), [
        ...baseAdvisories,
        { id: 'RLSA-2024:1020', ecosystem: ROCKY, pkg: 'cleanpkg', cves: ['CVE-2024-1020'], fixed: '1.0-2', severity: 'critical' },
        { id: 'RLSA-2024:1021', ecosystem: ROCKY, pkg: 'critpkg', cves: ['CVE-2024-1021'], fixed: '1.0-3', severity: 'high' },
      ]);
      assert.equal((await post('/import/sync-security')).statusCode, 200);
      const hooksBefore = hook.requests.length;

      let res = await post('/security/packages/cleanpkg/1.0-1/rescan', undefined, maintainer);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'pending_review');
      assert.equal(res.json().distributions[0].previous_status, 'published');
      res = await post('/security/packages/critpkg/1.0-1/rescan', {}, maintainer);
      assert.equal(res.json().status, 'pending_review', 'CVE-2024-1021 is not covered by the decision');
      res = await post('/security/packages/highpkg/1.0-1/rescan', undefined, maintainer);
      assert.equal(res.json().status, 'exception', 'nothing new: the exception stands');
      res = await post('/security/packages/warnpkg/1.0-1/rescan', undefined, maintainer);
      assert.equal(res.json().status, 'published');
      assert.equal((await post('/security/packages/warnpkg/1.0-1/rescan', undefined, await app.tokenFor('uploader'))).statusCode, 403);

      assert.deepEqual(await rpmIndexNames(app.dataDir, 'rocky9'), ['highpkg', 'warnpkg']);
      const queue = await get('/security/review-queue');
      const crit = queue.items.find((i: Json) => i.name === 'critpkg');
      assert.deepEqual(crit.findings.map((f: Json) => f.cve_id).sort(), ['CVE-2024-1001', 'CVE-2024-1021']);
      const rescans = await get('/audit/logs?action=RESCAN');
      assert.ok(rescans.items.some((e: Json) => e.package === 'cleanpkg' && e.detail.includes('published->pending_review')));

      await settle();
      const fresh = events(hook).slice(hooksBefore).filter((e) => e.event === 'package.pending_review');
      assert.deepEqual(fresh.map((e) => [e.data.name, e.data.cause]).sort(), [['cleanpkg', 'rescan'], ['critpkg', 'rescan']]);
    });

    it('quarantines from any state, idempotently', async () => {
      let res = await post('/security/packages/warnpkg/1.0-1/quarantine', { reason: 'suspicious postinst' }, maintainer);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().status, 'quarantined');
      assert.equal(res.json().changed, true);
      res = await post('/security/packages/warnpkg/1.0-1/quarantine', undefined, maintainer);
      assert.equal(res.json().changed, false);
      assert.deepEqual(await rpmIndexNames(app.dataDir, 'rocky9'), ['highpkg']);
      const row = await app.ctx.db.selectFrom('packages').select('sha256').where('name', '=', 'warnpkg').executeTakeFirstOrThrow();
      assert.ok((await filesUnder(join(app.dataDir, 'quarantine'))).includes(row.sha256));
      const audit = await get('/audit/logs?action=QUARANTINE');
      assert.ok(audit.items.some((e: Json) => e.package === 'warnpkg' && e.detail.includes('published->quarantined') && e.detail.includes('suspicious postinst')));
    });

    it('reads and changes the CVE policy; a block policy quarantines at upload', async () => {
      const policy = await get('/security/policy');
      assert.deepEqual(policy, { critical: 'review', high: 'review', medium: 'warn', low: 'allow', sla_days: { critical: 7, high: 30, medium: 90, low: 180 }, kev_action: 'review' });
      assert.equal((await app.app.inject({ method: 'GET', url: '/security/policy', headers: bearer(maintainer) })).statusCode, 403);
      const bad = await app.app.inject({ method: 'PATCH', url: '/security/policy', headers: bearer(admin), payload: { low: 'ignore' } });
      assert.equal(bad.statusCode, 422);
      const res = await app.app.inject({ method: 'PATCH', url: '/security/policy', headers: bearer(admin), payload: { low: 'block', sla_days: { critical: 3 } } });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().low, 'block');
      assert.deepEqual(res.json().sla_days, { critical: 3, high: 30, medium: 90, low: 180 });
      const audit = await get('/audit/logs?action=SETTINGS_CHANGE');
      assert.ok(audit.items.some((e: Json) => e.detail.includes('cve_policy') && e.detail.includes('sla_days')));

      const up = await upload(app, admin, pkgs.blockpkg!, 'rocky9');
      assert.equal(up.statusCode, 201, up.body);
      assert.equal(up.json().status, 'quarantined');
      assert.equal(up.json().pipeline.cve_scan, 'blocked');
      const row = await app.ctx.db.selectFrom('packages').select(['sha256', 'status']).where('name', '=', 'blockpkg').executeTakeFirstOrThrow();
      assert.equal(row.status, 'quarantined');
      assert.ok((await filesUnder(join(app.dataDir, 'quarantine'))).includes(row.sha256));
      assert.ok(!(await rpmIndexNames(app.dataDir, 'rocky9')).includes('blockpkg'));
      await app.app.inject({ method: 'PATCH', url: '/security/policy', headers: bearer(admin), payload: { low: 'allow', sla_days: { critical: 7 } } });
    });

    it('expiry returns accepted risks and exceptions to review and out of the index; SLA warnings are sent', async () => {
      const deps = app.ctx.security.scheduled;
      const hooksBefore = hook.requests.length;
      assert.deepEqual(await runExpiry(deps, new Date()), [], 'nothing expired yet');
      const expired = await runExpiry(deps, new Date(Date.now() + 2 * DAY));
      assert.deepEqual(expired.map((e) => [e.name, e.previous_status]), [['libfoo1', 'accepted_risk']]);
      assert.deepEqual(await statusOf('libfoo1', '1.2-3+b1'), ['pending_review']);
      assert.deepEqual(await aptIndexNames(app.dataDir, 'bookworm'), ['libbar1']);
      const later = await runExpiry(deps, new Date(Date.now() + 31 * DAY));
      assert.deepEqual(later.map((e) => e.name), ['highpkg']);
      assert.deepEqual(await rpmIndexNames(app.dataDir, 'rocky9'), []);

      const warned = await runSlaWarnings(deps, new Date(Date.now() + 2 * DAY));
      assert.ok(warned >= 2, `critical packages are within 7 days of their deadline (${warned})`);
      await settle();
      const fresh = events(hook).slice(hooksBefore);
      assert.deepEqual(fresh.filter((e) => e.event === 'risk.expired').map((e) => e.data.name), ['libfoo1', 'highpkg']);
      assert.ok(fresh.some((e) => e.event === 'package.pending_review' && e.data.cause === 'expiry' && e.data.name === 'libfoo1'));
      assert.ok(fresh.some((e) => e.event === 'sla.warning' && e.data.name === 'critpkg'));
      verifySignature(hook);
      assert.ok(smtp.messages.some((m) => m.subject?.includes('exception expired: highpkg')));
      assert.ok(smtp.messages.some((m) => m.subject?.startsWith('[Tollgate] SLA')));
      const metrics = (await app.app.inject({ method: 'GET', url: '/metrics' })).body;
      assert.match(metrics, /^tollgate_pending_review_total [1-9]/m);
      assert.match(metrics, /^tollgate_quarantine_total [1-9]/m);
      assert.match(metrics, /^tollgate_cve_findings_total\{severity="critical"\} [1-9]/m);
    });

    it('covers the remaining transitions: upgrade_required → accepted_risk, rescan pending → published and pending → quarantined', async () => {
      let res = await post('/security/packages/twoarch/1.0-1/decide', { action: 'accept_risk', justification: 'upgrade scheduled next sprint', arch: 'x86_64' });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().previous_status, 'upgrade_required');
      assert.equal(res.json().status, 'accepted_risk');
      assert.deepEqual(await rpmIndexNames(app.dataDir, 'rocky9'), ['twoarch']);

      await writeOsvFeed(join(tmp.dir, 'osv.json'), [
        ...baseAdvisories.filter((a) => a.pkg !== 'foo'),
        { id: 'RLSA-2024:1021', ecosystem: ROCKY, pkg: 'critpkg', cves: ['CVE-2024-1021'], fixed: '1.0-3', severity: 'high' },
      ]);
      assert.equal((await post('/import/sync-security')).statusCode, 200);
      res = await post('/security/packages/libfoo1/1.2-3+b1/rescan', undefined, maintainer);
      assert.equal(res.json().status, 'published', 'the advisory is gone: nothing holds the package');
      assert.deepEqual(await aptIndexNames(app.dataDir, 'bookworm'), ['libbar1', 'libfoo1']);

      await app.app.inject({ method: 'PATCH', url: '/security/policy', headers: bearer(admin), payload: { high: 'block' } });
      res = await post('/security/packages/critpkg/1.0-1/rescan', undefined, maintainer);
      assert.equal(res.json().status, 'quarantined');
      await app.app.inject({ method: 'PATCH', url: '/security/policy', headers: bearer(admin), payload: { high: 'review' } });
      assert.deepEqual(await statusOf('critpkg', '1.0-1'), ['quarantined']);
    });
  });
}
