import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { backends, bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { buildDeb } from '../../harness/debs.js';
import { multipartBody } from '../../harness/multipart.js';
import { buildRpm } from '../../harness/rpms.js';
import { makeTempDir } from '../helpers/tmp.js';
import { DomainError } from '../../src/domain/errors.js';

const STEPS = ['format', 'provenance', 'antivirus', 'cve', 'signature', 'dependencies'];
const sha256 = async (path: string) => createHash('sha256').update(await readFile(path)).digest('hex');

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Splits a text/event-stream body into events (blank-line separated `event:` / `data:` lines). */
function parseSse(text: string): SseEvent[] {
  return text
    .split(/\n\n/)
    .filter((block) => block.trim() !== '')
    .map((block) => {
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      return { event, data: JSON.parse(data.join('\n')) as Record<string, unknown> };
    });
}

/** Value of one sample of a Prometheus text exposition, 0 when absent. */
function sample(metrics: string, name: string, labels: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

for (const backend of backends()) {
  describe(`POST /upload and /upload/stream (${backend})`, () => {
    let t: TestApp;
    let base: string;
    let admin: string;
    let uploader: string;
    let work: { dir: string; cleanup: () => Promise<void> };

    const form = (path: string | null, fields: Record<string, string>) => multipartBody(fields, path ? { path } : undefined);
    const upload = async (token: string | null, path: string, fields: Record<string, string>, url = '/upload') => {
      const f = await form(path, fields);
      return t.app.inject({ method: 'POST', url, headers: { ...(token ? bearer(token) : {}), ...f.headers }, payload: f.payload });
    };
    /** A streamed upload over a real socket; returns the HTTP status, content type and parsed events. */
    const stream = async (token: string, path: string, fields: Record<string, string>) => {
      const f = await form(path, fields);
      const res = await fetch(`${base}/upload/stream`, { method: 'POST', headers: { ...bearer(token), ...f.headers }, body: f.payload });
      return { status: res.status, type: res.headers.get('content-type'), events: parseSse(await res.text()) };
    };
    const metrics = async () => (await t.app.inject({ method: 'GET', url: '/metrics' })).body;

    before(async () => {
      work = await makeTempDir('tollgate-upload-');
      t = await startTestApp({ backend });
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      admin = await t.tokenFor('admin');
      uploader = await t.tokenFor('uploader', 'upl');
    });
    after(async () => {
      await t.close();
      await work.cleanup();
    });

    it('answers 201 with the fields of both forms, and 200 for an identical retry', async () => {
      const deb = await buildDeb(work.dir, { name: 'form-check', version: '2:1.5-1', arch: 'all', depends: 'libc6 (>= 2.34)' });
      const res = await upload(uploader, deb, { distribution: 'jammy', sha256: (await sha256(deb)).toUpperCase() });
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json();
      // form 1
      assert.equal(body.name, 'form-check');
      assert.equal(body.version, '2:1.5-1');
      assert.equal(body.arch, 'all');
      assert.equal(body.distribution, 'jammy');
      assert.equal(body.status, 'published', 'form 1 "indexed" is not used (DECISIONS §4)');
      // form 2
      assert.equal(body.package, 'form-check');
      assert.deepEqual(Object.keys(body.pipeline).sort(), ['antivirus', 'cve_scan', 'dependencies', 'format', 'gpg', 'provenance']);
      assert.deepEqual(body.pipeline, { format: 'valid', provenance: 'verified', antivirus: 'skipped', cve_scan: 'skipped', gpg: 'signed', dependencies: 'missing' });
      // union extras
      assert.equal(body.sha256, await sha256(deb));
      assert.equal(body.size, (await readFile(deb)).length);
      assert.deepEqual(body.steps.map((s: { name: string }) => s.name), STEPS);
      for (const s of body.steps) assert.equal(typeof s.message, 'string');
      assert.match(body.steps.find((s: { name: string }) => s.name === 'dependencies').message, /libc6 \(>= 2\.34\)/);
      assert.deepEqual(body.findings, { critical: 0, high: 0, medium: 0, low: 0, negligible: 0 });
      assert.deepEqual(body.reasons, []);
      // Server-Timing: receive, each step that ran, finish, then total (at least their sum).
      const timing = String(res.headers['server-timing']).split(', ').map((entry) => {
        const match = /^([a-z]+);dur=(\d+\.\d)$/.exec(entry);
        assert.ok(match, `Server-Timing entry ${entry}`);
        return { name: match[1]!, ms: Number(match[2]) };
      });
      assert.deepEqual(timing.map((s) => s.name), ['receive', 'format', 'provenance', 'antivirus', 'cve', 'signature', 'dependencies', 'finish', 'total']);
      const parts = timing.slice(0, -1).reduce((sum, s) => sum + s.ms, 0);
      assert.ok(Math.abs(timing.at(-1)!.ms - parts) <= 0.1 * timing.length, `total ${timing.at(-1)!.ms} against the sum of its parts ${parts}`);

      const retry = await upload(uploader, deb, { distribution: 'jammy' }, '/api/v1/upload/');
      assert.equal(retry.statusCode, 200, retry.body);
      assert.equal(retry.json().status, 'published');
      assert.equal(retry.json().sha256, body.sha256);
      // A duplicate stops the pipeline at the step that found it: the later ones never ran.
      assert.doesNotMatch(String(retry.headers['server-timing']), /dependencies/);
      assert.deepEqual(retry.json().steps.map((s: { name: string }) => s.name), STEPS);
      assert.equal((await t.ctx.db.selectFrom('packages').select('id').where('name', '=', 'form-check').execute()).length, 1);
    });

    it('streams step events for the six steps in order, then a result with the /upload body', async () => {
      const rpm = await buildRpm(work.dir, { name: 'stream-rpm', version: '1.0', release: '1', arch: 'noarch', files: { '/usr/share/stream-rpm/a': 'a\n' }, noAutoReqProv: true });
      const res = await stream(uploader, rpm, { distribution: 'rocky9' });
      assert.equal(res.status, 200);
      assert.match(res.type ?? '', /^text\/event-stream/);
      const steps = res.events.filter((e) => e.event === 'step');
      assert.deepEqual(
        steps.map((e) => `${e.data.step}:${e.data.state}`),
        STEPS.flatMap((s) => [`${s}:started`, `${s}:finished`]),
      );
      for (const e of steps.filter((s) => s.data.state === 'finished')) {
        assert.equal(typeof e.data.status, 'string');
        assert.equal(typeof e.data.message, 'string');
      }
      assert.equal(res.events.at(-1)!.event, 'result');
      assert.equal(res.events.filter((e) => e.event === 'result').length, 1);
      const result = res.events.at(-1)!.data;
      assert.equal(result.http_status, 201);
      assert.equal(result.status, 'published');
      assert.equal(result.package, 'stream-rpm');
      assert.equal(result.version, '1.0-1');
      assert.equal(result.arch, 'noarch');
      assert.equal(result.sha256, await sha256(rpm));
      // the same fields as the plain upload answers for the same file (a retry: 200, the stored result)
      const plain = await upload(uploader, rpm, { distribution: 'rocky9' });
      assert.equal(plain.statusCode, 200);
      const { http_status: _status, ...streamed } = result;
      assert.deepEqual(Object.keys(streamed).sort(), Object.keys(plain.json()).sort());
      assert.deepEqual(streamed.pipeline, plain.json().pipeline);
      assert.deepEqual(streamed.steps, plain.json().steps);
    });

    it('streams a rejection as a result with http_status 422, and a conflict as an error event', async () => {
      const i386 = await buildDeb(work.dir, { name: 'stream-i386', version: '1.0', arch: 'i386' });
      const rejected = await stream(uploader, i386, { distribution: 'jammy' });
      assert.equal(rejected.events.at(-1)!.event, 'result');
      assert.equal(rejected.events.at(-1)!.data.http_status, 422);
      assert.equal(rejected.events.at(-1)!.data.status, 'rejected');
      // Steps after the decisive one are reported too, as finished `skipped`, so a client sees all six.
      assert.deepEqual(rejected.events.filter((e) => e.event === 'step').map((e) => `${e.data.step}:${e.data.state}`), [
        'format:started', 'format:finished', 'provenance:finished', 'antivirus:finished', 'cve:finished', 'signature:finished', 'dependencies:finished',
      ]);
      assert.ok(rejected.events.filter((e) => e.event === 'step').slice(2).every((e) => e.data.status === 'skipped'));
      assert.equal(rejected.events.find((e) => e.data.state === 'finished')!.data.status, 'failed');

      const first = await buildDeb(work.dir, { name: 'stream-conflict', version: '1.0' });
      assert.equal((await upload(uploader, first, { distribution: 'noble' })).statusCode, 201);
      const otherDir = join(work.dir, 'other');
      await mkdir(otherDir, { recursive: true });
      const second = await buildDeb(otherDir, { name: 'stream-conflict', version: '1.0', files: { 'usr/share/doc/stream-conflict/x': 'other content' } });
      const conflict = await stream(uploader, second, { distribution: 'noble' });
      assert.equal(conflict.status, 200, 'the stream had started');
      const last = conflict.events.at(-1)!;
      assert.equal(last.event, 'error');
      assert.equal(last.data.http_status, 409);
      assert.equal(last.data.code, 'version_exists');
      assert.equal(typeof last.data.detail, 'string');
      assert.equal(last.data.existing_sha256, await sha256(first));
      assert.equal(last.data.incoming_sha256, await sha256(second));
      assert.deepEqual([last.data.name, last.data.version, last.data.arch, last.data.distribution], ['stream-conflict', '1.0', 'amd64', 'noble']);
      assert.equal(conflict.events.filter((e) => e.event === 'result').length, 0);
    });

    it('refuses bad input to the stream with a plain 4xx before any event', async () => {
      const deb = await buildDeb(work.dir, { name: 'stream-bad', version: '1.0' });
      const f = await form(deb, { distribution: 'xenial' });
      const res = await fetch(`${base}/api/upload/stream`, { method: 'POST', headers: { ...bearer(uploader), ...f.headers }, body: f.payload });
      assert.equal(res.status, 422);
      assert.match(res.headers.get('content-type') ?? '', /json/);
      assert.equal(((await res.json()) as { code: string }).code, 'unknown_distribution');
      const noFile = await form(null, { distribution: 'jammy' });
      const res2 = await fetch(`${base}/upload/stream`, { method: 'POST', headers: { ...bearer(uploader), ...noFile.headers }, body: noFile.payload });
      assert.equal(res2.status, 422);
    });

    it('lets uploaders, maintainers and admins upload; readers and auditors get 403, anonymous 401', async () => {
      const deb = await buildDeb(work.dir, { name: 'role-check', version: '1.0' });
      for (const role of ['reader', 'auditor'] as const) {
        const token = await t.tokenFor(role);
        for (const url of ['/upload', '/upload/stream']) {
          const res = await upload(token, deb, { distribution: 'jammy' }, url);
          assert.equal(res.statusCode, 403, `${role} ${url}`);
          assert.equal(res.json().code, 'forbidden');
        }
      }
      for (const url of ['/upload', '/upload/stream']) {
        const anon = await upload(null, deb, { distribution: 'jammy' }, url);
        assert.equal(anon.statusCode, 401);
        assert.equal(anon.headers['www-authenticate'], 'Bearer');
        assert.equal(typeof anon.json().detail, 'string');
      }
      assert.equal((await t.ctx.db.selectFrom('packages').select('id').where('name', '=', 'role-check').execute()).length, 0);
      const maintainer = await upload(await t.tokenFor('maintainer'), deb, { distribution: 'jammy' });
      assert.equal(maintainer.statusCode, 201, maintainer.body);
      const byAdmin = await upload(admin, deb, { distribution: 'focal' });
      assert.equal(byAdmin.statusCode, 201, byAdmin.body);
    });

    it('audits every upload (SUCCESS / FAILURE) and counts it in tollgate_uploads_total', async () => {
      const before = await metrics();
      const published0 = sample(before, 'tollgate_uploads_total', 'status="published"');
      const rejected0 = sample(before, 'tollgate_uploads_total', 'status="rejected"');
      const good = await buildDeb(work.dir, { name: 'audit-good', version: '3.0-1' });
      const bad = await buildDeb(work.dir, { name: 'audit-bad', version: '3.0-1', arch: 'arm64' });
      assert.equal((await upload(uploader, good, { distribution: 'bookworm' })).statusCode, 201);
      assert.equal((await upload(uploader, bad, { distribution: 'bookworm' })).statusCode, 422);
      const after = await metrics();
      assert.equal(sample(after, 'tollgate_uploads_total', 'status="published"'), published0 + 1);
      assert.equal(sample(after, 'tollgate_uploads_total', 'status="rejected"'), rejected0 + 1);
      // the gauge counts stored packages: the published one, not the rejected one
      const total = (text: string) => Number(/^tollgate_packages_total (\d+)$/m.exec(text)?.[1] ?? NaN);
      assert.equal(total(after), total(before) + 1);
      assert.equal(total(after), Number((await t.ctx.db.selectFrom('packages').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n));

      const entries = await t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'UPLOAD').where('package', 'in', ['audit-good', 'audit-bad']).orderBy('seq').execute();
      assert.deepEqual(entries.map((e) => [e.package, e.version, e.result, e.username]), [
        ['audit-good', '3.0-1', 'SUCCESS', 'upl'],
        ['audit-bad', '3.0-1', 'FAILURE', 'upl'],
      ]);
      assert.match(entries[0]!.detail ?? '', /distribution=bookworm; status=published/);
      assert.match(entries[1]!.detail ?? '', /status=rejected.*wrong_architecture/);
      assert.ok(entries.every((e) => e.ip), 'the source IP is recorded');

      // the audit endpoint shows them to an auditor
      const logs = await t.app.inject({ method: 'GET', url: '/artifacts/audit/logs?action=UPLOAD&package=audit-bad', headers: bearer(await t.tokenFor('auditor')) });
      assert.equal(logs.statusCode, 200, logs.body);
      assert.equal(logs.json().items.length, 1);
      assert.equal(logs.json().items[0].result, 'FAILURE');
    });

    it('audits an upload once its row is stored, while it waits for the signed index, and when that publish then fails', async () => {
      const publisher = t.ctx.repo.publisher;
      const request = publisher.request;
      const entriesOf = (name: string) => t.ctx.db.selectFrom('audit_index').selectAll().where('action', '=', 'UPLOAD').where('package', '=', name).execute();
      try {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        publisher.request = (codename) => held.then(() => request.call(publisher, codename));
        let answered = false;
        const answer = upload(uploader, await buildDeb(work.dir, { name: 'audit-early', version: '1.0+ds1-1' }), { distribution: 'bookworm' }).finally(() => (answered = true));
        const until = Date.now() + 10_000;
        while ((await entriesOf('audit-early')).length === 0) {
          assert.ok(Date.now() < until, 'no audit entry while the upload waits for its index');
          await new Promise((r) => setTimeout(r, 20));
        }
        assert.equal(answered, false, 'the entry came before the answer');
        release();
        assert.equal((await answer).statusCode, 201);
        const early = await entriesOf('audit-early');
        assert.equal(early.length, 1, 'one entry, not a second one at the answer');
        assert.match(early[0]!.detail ?? '', /status=published/);

        // The row is stored as published and the next publish lists it: the entry says so even
        // though this answer is an error (before, a failed publish left the stored upload unaudited).
        publisher.request = () => Promise.reject(new DomainError('unavailable', 'publish_failed', 'index could not be written'));
        const failing = await upload(uploader, await buildDeb(work.dir, { name: 'audit-unpublished', version: '2.0-1' }), { distribution: 'bookworm' });
        assert.equal(failing.statusCode, 503, failing.body);
        const entries = await entriesOf('audit-unpublished');
        assert.deepEqual(entries.map((e) => e.result), ['SUCCESS']);
        assert.match(entries[0]!.detail ?? '', /status=published/);
      } finally {
        publisher.request = request;
      }
      await publisher.request('bookworm');
    });
  });
}
