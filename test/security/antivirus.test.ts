/**
 * Antivirus with a real clamd (EICAR-only signature database): EICAR inside a .deb's data and
 * inside an .rpm payload is quarantined, a clean package is `clean`, the engine status and a
 * signature update (CLAMAV_UPDATE_COMMAND + RELOAD) work, and a stopped clamd makes uploads
 * answer 503 without storing anything and /health/ready answer 503.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { startClamd, EICAR, EICAR_SIGNATURE, type RunningClamd } from '../helpers/clamd.js';
import { buildDeb } from '../../harness/debs.js';
import { buildRpm } from '../../harness/rpms.js';
import { makeTempDir } from '../helpers/tmp.js';
import { aptIndexNames, filesUnder, rpmIndexNames, upload } from './support.js';

const MARKER = 'TOLLGATE-UPDATED-SIGNATURE-MARKER-7f3a9c';

describe('antivirus (real clamd)', () => {
  let clamd: RunningClamd;
  let app: TestApp;
  let admin: string;
  let tmp: { dir: string; cleanup: () => Promise<void> };

  before(async () => {
    tmp = await makeTempDir('tollgate-av-');
    clamd = await startClamd();
    const hex = Buffer.from(MARKER).toString('hex');
    app = await startTestApp({
      env: {
        CLAMAV_SOCKET: clamd.socket,
        CLAMAV_UPDATE_COMMAND: `printf 'Tollgate-Updated-Marker:0:*:${hex}\\n' > '${join(clamd.dbDir, 'update.ndb')}'`,
      },
    });
    admin = await app.tokenFor('admin');
  });

  after(async () => {
    await app.close();
    await clamd.stop();
    await tmp.cleanup();
  });

  it('quarantines EICAR inside a .deb and inside an .rpm payload; a clean package is `clean`', async () => {
    const deb = await buildDeb(tmp.dir, { name: 'evil-deb', version: '1.0-1', compression: 'xz', files: { 'usr/share/evil-deb/readme.txt': `hello\n${EICAR}\n` } });
    const rpm = await buildRpm(tmp.dir, { name: 'evil-rpm', version: '1.0', release: '1', payloadCompression: 'gzip', files: { '/usr/share/evil-rpm/data.txt': EICAR } });
    const clean = await buildRpm(tmp.dir, { name: 'clean-rpm', version: '1.0', release: '1', payloadCompression: 'zstd', files: { '/usr/share/clean-rpm/data.txt': 'harmless\n' } });
    for (const [file, dist, name] of [[deb, 'bookworm', 'evil-deb'], [rpm, 'rocky9', 'evil-rpm']] as const) {
      const res = await upload(app, admin, file, dist);
      assert.equal(res.statusCode, 201, res.body);
      const body = res.json() as { status: string; pipeline: Record<string, string>; reasons: string[]; sha256: string };
      assert.equal(body.status, 'quarantined', name);
      assert.equal(body.pipeline.antivirus, 'infected');
      assert.ok(body.reasons.some((r) => r.includes(EICAR_SIGNATURE)), body.reasons.join('; '));
      assert.ok((await filesUnder(join(app.dataDir, 'quarantine'))).includes(body.sha256), 'file kept in quarantine');
      assert.ok(!(await filesUnder(join(app.dataDir, 'store'))).includes(body.sha256), 'not in the store');
      const row = await app.ctx.db.selectFrom('packages').select('status').where('name', '=', name).executeTakeFirstOrThrow();
      assert.equal(row.status, 'quarantined');
    }
    const res = await upload(app, admin, clean, 'rocky9');
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.json().status, 'published');
    assert.equal(res.json().pipeline.antivirus, 'clean');
    assert.deepEqual(await rpmIndexNames(app.dataDir, 'rocky9'), ['clean-rpm']);
    assert.deepEqual(await aptIndexNames(app.dataDir, 'bookworm'), []);
  });

  it('reports the engine and updates its signatures with the configured command', async () => {
    const reader = await app.tokenFor('reader');
    const status = (await app.app.inject({ method: 'GET', url: '/security/avengine/status', headers: bearer(reader) })).json() as Record<string, unknown>;
    assert.equal(status.configured, true);
    assert.equal(status.ok, true);
    assert.match(String(status.version), /^\d+\.\d+/);

    assert.equal((await app.app.inject({ method: 'POST', url: '/security/avengine/update', headers: bearer(reader) })).statusCode, 403);
    const marked = await buildRpm(tmp.dir, { name: 'marked-rpm', version: '1.0', release: '1', payloadCompression: 'gzip', files: { '/usr/share/marked/data.txt': `x ${MARKER} y` } });
    const before = await upload(app, admin, marked, 'rocky9');
    assert.equal(before.json().status, 'published', 'the marker is not a known signature yet');

    const res = await app.app.inject({ method: 'POST', url: '/security/avengine/update', headers: bearer(await app.tokenFor('maintainer')) });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().updated, true);
    const marked2 = await buildRpm(tmp.dir, { name: 'marked-rpm', version: '1.0', release: '2', payloadCompression: 'gzip', files: { '/usr/share/marked/data.txt': `x ${MARKER} y` } });
    const afterUpdate = await upload(app, admin, marked2, 'rocky9');
    assert.equal(afterUpdate.json().status, 'quarantined', 'the reloaded database knows the new signature');

    const audit = (await app.app.inject({ method: 'GET', url: '/audit/logs?action=CLAMAV_UPDATE', headers: bearer(admin) })).json() as { items: Array<{ result: string }> };
    assert.equal(audit.items[0]?.result, 'SUCCESS');
    const metrics = (await app.app.inject({ method: 'GET', url: '/metrics' })).body;
    const value = Number(/^tollgate_clamav_last_update (\d+)/m.exec(metrics)?.[1]);
    assert.ok(Math.abs(value - Date.now() / 1000) < 120, `last update metric ${value}`);
  });

  it('answers 422 when the update command or clamd is not configured', async () => {
    const noCommand = await startTestApp({ env: { CLAMAV_SOCKET: clamd.socket } });
    const noClamd = await startTestApp();
    try {
      let res = await noCommand.app.inject({ method: 'POST', url: '/security/avengine/update', headers: bearer(await noCommand.tokenFor('admin')) });
      assert.equal(res.statusCode, 422);
      assert.equal(res.json().code, 'update_command_not_configured');
      const token = await noClamd.tokenFor('admin');
      res = await noClamd.app.inject({ method: 'POST', url: '/security/avengine/update', headers: bearer(token) });
      assert.equal(res.statusCode, 422);
      assert.equal(res.json().code, 'antivirus_not_configured');
      const status = (await noClamd.app.inject({ method: 'GET', url: '/security/avengine/status', headers: bearer(token) })).json() as Record<string, unknown>;
      assert.equal(status.configured, false);
      assert.equal(status.ok, false);
    } finally {
      await noCommand.close();
      await noClamd.close();
    }
  });

  it('with clamd stopped: upload 503 antivirus_unavailable, nothing stored, not ready', async () => {
    await clamd.stop();
    const rpm = await buildRpm(tmp.dir, { name: 'late-rpm', version: '1.0', release: '1', payloadCompression: 'gzip' });
    const storeBefore = await filesUnder(join(app.dataDir, 'store'));
    const res = await upload(app, admin, rpm, 'rocky9');
    assert.equal(res.statusCode, 503, res.body);
    assert.equal(res.json().code, 'antivirus_unavailable');
    assert.equal(await app.ctx.db.selectFrom('packages').select('id').where('name', '=', 'late-rpm').executeTakeFirst(), undefined);
    assert.deepEqual(await filesUnder(join(app.dataDir, 'store')), storeBefore);
    assert.deepEqual(await filesUnder(join(app.dataDir, 'tmp')), [], 'no temp file left');
    const ready = await app.app.inject({ method: 'GET', url: '/health/ready' });
    assert.equal(ready.statusCode, 503);
  });
});
