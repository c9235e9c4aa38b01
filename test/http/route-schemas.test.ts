/**
 * Every request schema of every route is a valid JSON Schema. The service's validators skip
 * Ajv's meta-schema check (it cost the first request of a process ~26 ms per Ajv instance), so
 * this test makes that check for all of them, with the service's own Ajv options.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { RequestValidatorCompiler } from '../../src/http/validation.js';
import { startTestApp, type TestApp } from '../helpers/app.js';

describe('route request schemas', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(async () => t.close());

  it('all pass the JSON Schema meta-schema and compile', () => {
    const { schemas } = t.app.validatorCompiler as RequestValidatorCompiler;
    assert.ok(schemas.length > 200, `only ${schemas.length} schemas seen`);
    assert.ok(schemas.some((s) => s.httpPart === 'body') && schemas.some((s) => s.httpPart === 'querystring') && schemas.some((s) => s.httpPart === 'params'));
    const ajv = new Ajv({ coerceTypes: 'array', removeAdditional: false, useDefaults: true, allErrors: false, strict: false, validateSchema: true });
    addFormats.default(ajv);
    const invalid = schemas.filter(({ schema }) => !ajv.validateSchema(schema as object));
    assert.deepEqual(invalid.map((s) => `${s.method} ${s.url} ${s.httpPart}`), []);
    for (const { schema, method, url, httpPart } of schemas) {
      assert.doesNotThrow(() => ajv.compile(schema as object), `${method} ${url} ${httpPart}`);
    }
  });

  it('a schema that is not a JSON Schema is caught', () => {
    const ajv = new Ajv({ strict: false, validateSchema: true });
    assert.equal(ajv.validateSchema({ type: 'object', properties: { a: { type: 'strnig' } } }), false);
    assert.equal(ajv.validateSchema({ type: 'object', required: 'a' }), false);
  });
});
