/**
 * The route table against the contract: every `METHOD /path` that API.md lists must be served
 * under `/`, `/api` and `/api/v1`, with and without a trailing slash, have a permission entry, and
 * answer an anonymous caller with 401 and the error body (or not-401 where public), never
 * "No route". The spec is read from ../shared/spec (the team's copy) when present, else from the
 * copy in test/fixtures/spec, which must then be identical to it.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ROUTE_ACCESS } from '../../src/http/permissions.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

const root = new URL('../..', import.meta.url).pathname;
const sharedSpec = join(root, '..', 'shared', 'spec');
const fixtureSpec = join(root, 'test', 'fixtures', 'spec');

/**
 * Sections still being built: each entry must be missing today (a route that lands must leave
 * this list) and the list shrinks to empty as the import and SBOM issues land.
 */
const EXPECTED_MISSING = new Set<string>([
]);

interface Endpoint {
  method: string;
  /** Fastify template: `/artifacts/:name`, no trailing slash. */
  template: string;
}

/** Every `METHOD /path` in the endpoint tables and in the text (`Also mentioned: GET /audit/logs`). */
export function endpointsOf(markdown: string): Endpoint[] {
  const found = new Map<string, Endpoint>();
  const pattern = /(?:^\|\s*|`)(GET|POST|PUT|PATCH|DELETE) (\/[^\s|`,]*)/gm;
  for (const [, method, path] of markdown.matchAll(pattern)) {
    // `POST /import/*` in the Limits table names a group of routes, not one.
    if (path!.includes('*')) continue;
    let template = path!.replace(/\{([a-z_]+)\}/g, ':$1');
    if (template.length > 1 && template.endsWith('/')) template = template.slice(0, -1);
    found.set(`${method} ${template}`, { method: method!, template });
  }
  return [...found.values()];
}

function readSpec(file: string): string {
  const shared = join(sharedSpec, file);
  const fixture = readFileSync(join(fixtureSpec, file), 'utf8');
  if (!existsSync(shared)) return fixture;
  const text = readFileSync(shared, 'utf8');
  assert.equal(fixture, text, `test/fixtures/spec/${file} differs from ../shared/spec/${file}: copy the new one over`);
  return text;
}

describe('route table conformance with API.md', () => {
  let t: TestApp;
  const endpoints = endpointsOf(readSpec('API.md'));
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('finds every endpoint table of the spec', () => {
    readSpec('DECISIONS.md');
    assert.ok(endpoints.length >= 80, `only ${endpoints.length} endpoints parsed`);
    for (const key of ['GET /audit/logs', 'GET /audit/package/:name', 'POST /upload', 'GET /dashboard/summary', 'POST /security/packages/:name/:version/decide']) {
      assert.ok(endpoints.some((e) => `${e.method} ${e.template}` === key), `${key} parsed`);
    }
  });

  it('registers every listed endpoint under /, /api and /api/v1 with a permission entry, except the expected-missing list', () => {
    const registered = new Set(t.routes.map((r) => `${r.method} ${r.url.replace(/\/$/, '') || '/'}`));
    for (const { method, template } of endpoints) {
      const key = `${method} ${template}`;
      if (EXPECTED_MISSING.has(key)) {
        assert.ok(!registered.has(key), `${key} is registered now: remove it from EXPECTED_MISSING`);
        continue;
      }
      assert.ok(ROUTE_ACCESS[key] !== undefined, `${key} has no permission entry`);
      for (const prefix of ['', '/api', '/api/v1']) assert.ok(registered.has(`${method} ${prefix}${template}`), `${method} ${prefix}${template} is not registered`);
    }
  });

  it('answers an anonymous caller with 401 and the error body (or, where public, anything but "No route"), at every prefix, with and without a trailing slash', async () => {
    for (const { method, template } of endpoints) {
      const key = `${method} ${template}`;
      if (EXPECTED_MISSING.has(key)) continue;
      const access = ROUTE_ACCESS[key];
      const path = template.replace(/:[a-z_]+/g, 'x');
      for (const prefix of ['', '/api', '/api/v1']) {
        for (const url of [`${prefix}${path}`, `${prefix}${path}/`]) {
          const res = await t.app.inject({ method: method as 'GET', url });
          const body = (/json/.test(String(res.headers['content-type'])) ? res.json() : {}) as { detail?: string; code?: string };
          assert.ok(!String(body.detail ?? '').startsWith('No route'), `${method} ${url}: ${res.body}`);
          if (access === 'public') continue;
          assert.equal(res.statusCode, 401, `${method} ${url} → ${res.statusCode} ${res.body}`);
          assert.equal(body.code, 'not_authenticated');
          assert.equal(res.headers['www-authenticate'], 'Bearer');
        }
      }
    }
  });
});
