/**
 * Route schemas compiled ahead of a route's first request (src/http/deferred-compilations.ts):
 * the resolver warm-up has GET /import/resolve's validators and serializers compiled, under every
 * API prefix, and what is compiled ahead answers as the lazily compiled one would.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { bearer, startTestApp, type TestApp } from '../helpers/app.js';
import { RESOLVER_WARM_UP_FROM } from '../../src/services/imports/index.js';

describe('route schemas compiled ahead', () => {
  let t: TestApp;
  let reader: Record<string, string>;
  before(async () => {
    t = await startTestApp();
    reader = bearer(await t.tokenFor('reader'));
  });
  after(async () => t.close());

  it('compiles a route once, under every prefix, and it answers as before', async () => {
    const path = '/import/search';
    const compiled = t.app.compileAhead('GET', path);
    // Its querystring validator and the serializers of its answers, each under /, /api and /api/v1.
    assert.ok(compiled >= 6 && compiled % 3 === 0, `${compiled} compiled`);
    assert.equal(t.app.compileAhead('GET', path), 0);
    assert.equal(t.app.compileAhead('GET', '/no/such/route'), 0);
    const empty = await t.app.inject({ method: 'GET', url: '/api/v1/import/search?q=curl', headers: reader });
    assert.equal(empty.statusCode, 424);
    assert.equal(empty.json().code, 'catalog_empty');
    const unknownField = await t.app.inject({ method: 'GET', url: '/import/search?q=curl&nope=1', headers: reader });
    assert.equal(unknownField.statusCode, 422, unknownField.body);
  });

  it('what a request compiled is not compiled again', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/api/import/sync-status', headers: reader })).statusCode, 200);
    // A path with its prefix names that copy of the route alone.
    const usedCopy = t.app.compileAhead('GET', '/api/import/sync-status');
    const unusedCopy = t.app.compileAhead('GET', '/api/v1/import/sync-status');
    // The request compiled its 200 answer's serializer (the route validates nothing).
    assert.equal(usedCopy, unusedCopy - 1);
    assert.equal(t.app.compileAhead('GET', '/import/sync-status'), unusedCopy);
  });

  it('the resolver warm-up compiles GET /import/resolve', async () => {
    // The /api/v1 copy compiled here (so the template matches), the two others by the warm-up.
    assert.ok(t.app.compileAhead('GET', '/api/v1/import/resolve/:package_name') >= 3);
    const { imports } = t.ctx;
    const warmUp = imports.catalog.warmUp;
    imports.catalog.warmUp = async () => ({ ms: 0, catalogRoots: 0 });
    try {
      await imports.prepareResolver(RESOLVER_WARM_UP_FROM);
    } finally {
      imports.catalog.warmUp = warmUp;
    }
    assert.equal(t.app.compileAhead('GET', '/import/resolve/:package_name'), 0);
    const answer = await t.app.inject({ method: 'GET', url: '/import/resolve/curl?distribution=bookworm', headers: reader });
    assert.equal(answer.statusCode, 424);
  });
});
