/**
 * Hostile path parameters on every route that takes a name, against the real service: `..`
 * (plain and percent-encoded, upper and lower case, with `/` and `\`), NUL, overlong UTF-8,
 * invalid UTF-8, Unicode look-alikes of `.` and `/`, bidirectional overrides, very long names.
 * Every answer is a 2xx or a 4xx with the error body, never a 5xx; the service keeps running;
 * files placed beside DATA_DIR (the target of every traversal) are left untouched.
 */
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildDeb } from '../../harness/debs.js';
import { assertErrorBody } from '../helpers/errors.js';
import { makeTempDir } from '../helpers/tmp.js';
import { adminToken, leftoverTempFiles, startService, uploadFile, type RunningService } from '../faults/support.js';
import { ROUTE_ACCESS } from '../../src/http/permissions.js';
import { rawRequest } from './abuse-support.js';

/** Each value goes into the URL as written: already percent-encoded where a raw byte could not be sent. */
export const HOSTILE_SEGMENTS = [
  '..', '.', '...', '%2e%2e', '%2E%2E', '.%2e', '%2e.',
  '..%2f..%2f..%2fsentinel', '..%2F..%2F..%2Fsentinel%2Fsecret', '..%5c..%5csentinel', '%2e%2e%2f%2e%2e%2fsentinel',
  '%252e%252e%252fsentinel', '....%2f%2f', '%00', 'abc%00.deb', '%00..%2f',
  '%c0%ae%c0%ae', '%c0%af', '%e0%80%ae%e0%80%ae', '%c0%2e', '%ff%fe', '%80', '%', '%zz', '%e0%a4%a',
  '%e2%80%a4%e2%80%a4', '%ef%bc%8e%ef%bc%8e', '%e2%88%95sentinel', '%ef%bc%8fetc%ef%bc%8fpasswd', '%e2%80%ae', 'admin%e2%80%8b',
  '%ef%bd%81%ef%bd%84%ef%bd%8d%ef%bd%89%ef%bd%8e', 'ABUSE-TARGET', 'a'.repeat(5000), '%20', '%0d%0aX-Injected:%201', '~root', '$(id)', "'%20OR%20'1'='1",
];

/** Bodies that get past validation, so the parameter itself is judged; other changes send `{}`. */
const BODIES: Record<string, unknown> = {
  'PATCH /auth/users/:username': { full_name: 'x' },
  'POST /auth/users/:username/reset-password': { new_password: 'Another-Passw0rd!' },
  'POST /security/packages/:name/:version/quarantine': { reason: 'abuse test' },
  'POST /security/packages/:name/:version/decide': { action: 'reject', justification: 'abuse test' },
  'POST /security/packages/:name/:version/decision': { action: 'reject', justification: 'abuse test' },
  'PATCH /import/sources/:id': { enabled: false },
};

/**
 * Every route of the permission table that takes a parameter, by family (its first path
 * segment), so a route added later is covered too; and the published tree, whose wildcard
 * takes any path.
 */
const FAMILIES: Array<{ family: string; routes: Array<{ method: string; template: string; body?: unknown }> }> = (() => {
  const byFamily = new Map<string, Array<{ method: string; template: string; body?: unknown }>>();
  for (const key of Object.keys(ROUTE_ACCESS)) {
    const [method = '', template = ''] = key.split(' ');
    if (!template.includes('/:')) continue;
    const family = template.split('/')[1]!;
    const body = BODIES[key] ?? (method === 'GET' || method === 'DELETE' ? undefined : {});
    byFamily.set(family, [...(byFamily.get(family) ?? []), { method, template, body }]);
  }
  byFamily.set('repo', [
    { method: 'GET', template: '/repo/apt/pool/main/:name' },
    { method: 'GET', template: '/repo/apt/dists/:name/InRelease' },
    { method: 'GET', template: '/repo/:name/keys/tollgate.asc' },
  ]);
  return [...byFamily].map(([family, routes]) => ({ family, routes }));
})();

/** Names, sizes and contents of every file under `dir` (what a traversal could have touched). */
async function snapshot(dir: string): Promise<string> {
  const lines: string[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const name of (await readdir(d)).sort()) {
      const path = join(d, name);
      const info = await stat(path);
      if (info.isDirectory()) await walk(path);
      else lines.push(`${path} ${info.size} ${info.mtimeMs} ${(await readFile(path)).toString('base64')}`);
    }
  };
  await walk(dir);
  return lines.join('\n');
}

describe('hostile path parameters on every route that takes a name (real service)', () => {
  let work: { dir: string; cleanup: () => Promise<void> };
  let service: RunningService | null = null;
  before(async () => {
    work = await makeTempDir('tollgate-abuse-paths-');
  });
  after(async () => {
    await service?.kill();
    await work?.cleanup();
  });

  it('answers 2xx or 4xx with the error body, never 5xx, and touches nothing outside DATA_DIR', async () => {
    // Traversal targets: files beside DATA_DIR, and one a level above.
    const sentinel = join(work.dir, 'sentinel');
    await mkdir(sentinel);
    await writeFile(join(sentinel, 'secret'), 'do not serve or delete\n');
    await writeFile(join(work.dir, 'passwd'), 'root:x:0:0\n');
    const dataDir = join(work.dir, 'data');
    service = await startService(dataDir);
    const token = await adminToken(service.base, dataDir);
    // One real package, so routes that find it go further than a 404.
    const upload = await uploadFile(service.base, token, await buildDeb(work.dir, { name: 'abuse-target', version: '1.0' }));
    assert.equal(upload.status, 201, upload.text);
    const outside = await snapshot(sentinel);
    const outsidePasswd = await readFile(join(work.dir, 'passwd'), 'utf8');

    const figures: string[] = [];
    const statuses = new Map<number, number>();
    let total = 0;
    for (const { family, routes } of FAMILIES) {
      let tried = 0;
      for (const route of routes) {
        const params = route.template.match(/:[a-z_]+/g) ?? [];
        for (const hostile of HOSTILE_SEGMENTS) {
          // Each parameter hostile in turn, the others a plain existing value.
          for (let p = 0; p < params.length; p++) {
            let path = route.template;
            params.forEach((param, i) => {
              path = path.replace(param, i === p ? hostile : param === ':version' ? '1.0' : 'abuse-target');
            });
            const body = route.body === undefined ? undefined : JSON.stringify(route.body);
            const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) };
            const res = await rawRequest(service.port, route.method, path, headers, body);
            const what = `${route.method} ${path.slice(0, 120)}`;
            assert.ok(res.status < 500, `${what}: ${res.status} ${res.body.slice(0, 300)}`);
            statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
            if (res.status >= 400 && route.method !== 'HEAD') assertErrorBody(res.status, res.body, what);
            // Nothing a traversal reached is ever served.
            assert.doesNotMatch(res.body, /do not serve or delete|root:x:0:0/, what);
            tried++;
          }
        }
      }
      // Still authenticated: the requests after this family were judged as the admin's.
      assert.equal((await rawRequest(service.port, 'GET', '/auth/me', { authorization: `Bearer ${token}` })).status, 200, `the session ended during ${family}`);
      figures.push(`${family} ${tried}`);
      total += tried;
    }

    assert.equal(service.exited(), false, service.output());
    assert.equal((await fetch(`${service.base}/health/live`)).status, 200);
    assert.equal(await snapshot(sentinel), outside, 'files beside DATA_DIR were touched');
    assert.equal(await readFile(join(work.dir, 'passwd'), 'utf8'), outsidePasswd);
    assert.deepEqual((await readdir(work.dir)).sort(), ['abuse-target_1.0_amd64.deb', 'data', 'passwd', 'sentinel'].sort(), 'nothing was created beside DATA_DIR');
    assert.deepEqual(await leftoverTempFiles(dataDir), []);
    // The admin account and the package are still there (no DELETE reached them through a look-alike).
    assert.equal((await rawRequest(service.port, 'GET', '/auth/users/admin', { authorization: `Bearer ${token}` })).status, 200);
    assert.equal((await rawRequest(service.port, 'GET', '/artifacts/abuse-target', { authorization: `Bearer ${token}` })).status, 200);
    assert.ok(FAMILIES.reduce((n, f) => n + f.routes.length, 0) >= 28, 'every parameterised route of the permission table');
    console.log(`abuse paths: ${total} requests, ${HOSTILE_SEGMENTS.length} hostile values per parameter: ${figures.join(', ')}; answers ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}; no 5xx, nothing outside DATA_DIR touched`);
  });
});
