/**
 * Route validators and response serializers are compiled at a route's first use instead of at
 * start-up (src/http/validation.ts, src/http/lazy-serializers.ts): the same functions must come
 * out, only later, and nothing is compiled for a route that is never called.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { Ajv } from 'ajv';
import Fastify from 'fastify';
import { lazySerializerFactory } from '../../src/http/lazy-serializers.js';
import { validatorCompiler } from '../../src/http/validation.js';

const schema = {
  type: 'object',
  properties: { name: { type: 'string' }, size: { type: 'integer' }, at: { type: 'string', format: 'date-time' } },
  required: ['name'],
} as const;

describe('lazy route compilers', () => {
  it('serializes as Fastify\'s default serializer does, compiling on the first call only', () => {
    const requireFromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
    const fjs = requireFromFastify('fast-json-stringify') as (s: object) => (d: unknown) => string;
    const route = { schema, method: 'GET', url: '/x', httpStatus: '200' };
    let reads = 0;
    // A schema whose properties are read only when compiled: none before the first call.
    const watched = { ...route, schema: new Proxy(schema, { get: (target, key) => { reads++; return Reflect.get(target, key); } }) };
    const serialize = lazySerializerFactory()({}, {})(watched);
    assert.equal(reads, 0, 'nothing compiled before the route answers');
    const data = { name: 'curl', size: '12', at: new Date(0), extra: 'dropped' };
    assert.equal(serialize(data), fjs(schema)(data));
    const afterFirst = reads;
    assert.ok(afterFirst > 0);
    assert.equal(serialize({ name: 'a' }), '{"name":"a"}');
    assert.equal(reads, afterFirst, 'compiled once');
  });

  it('validates, coerces and reports errors as the Ajv validator it wraps', () => {
    const compile = validatorCompiler();
    const query = compile({ schema: { type: 'object', properties: { limit: { type: 'integer' }, severity: { type: 'string', enum: ['critical', 'high'] } } }, method: 'GET', url: '/x', httpPart: 'querystring' }) as unknown as ((d: unknown) => boolean) & { errors?: unknown };
    const ok = { limit: '5', severity: 'Critical' };
    assert.equal(query(ok), true);
    assert.deepEqual(ok, { limit: 5, severity: 'critical' });
    assert.equal(query({ limit: 'many' }), false);
    const reference = new Ajv({ coerceTypes: 'array', strict: false }).compile({ type: 'object', properties: { limit: { type: 'integer' } } });
    reference({ limit: 'many' });
    assert.deepEqual(query.errors, reference.errors);
    assert.equal(query({ limit: 1 }), true);
    assert.equal(query.errors, null, 'errors of the last call, as Ajv sets them');
  });

  it('answers requests through Fastify with the lazy compilers: body refused, response shaped by its schema', async () => {
    const app = Fastify({ schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory() } } });
    app.setValidatorCompiler(validatorCompiler());
    app.post('/items', { schema: { body: schema, response: { 200: schema } } }, async (request) => ({ ...(request.body as object), secret: 'never sent' }));
    const good = await app.inject({ method: 'POST', url: '/items', payload: { name: 'x', size: 3 } });
    assert.equal(good.statusCode, 200);
    assert.deepEqual(good.json(), { name: 'x', size: 3 });
    const bad = await app.inject({ method: 'POST', url: '/items', payload: { size: 'three' } });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.json().message, /name|size/);
    await app.close();
  });
});
