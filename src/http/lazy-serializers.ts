/**
 * Response serializers compiled at a route's first answer instead of at start-up.
 *
 * Fastify compiles a fast-json-stringify serializer for every response schema of every route
 * when the routes are registered: with the API mounted under three prefixes and a HEAD copy of
 * each GET, that is about 320 generated functions (5 MiB of generated source alone, plus their
 * closures and schemas), held for the life of the process although a service answers only a
 * fraction of its routes. Deferring each compilation to the first reply that needs it keeps the
 * same serializer and the same output; only when it is built changes.
 */
import { createRequire } from 'node:module';
import type { DeferredCompilations } from './deferred-compilations.js';

type Serialize = (data: unknown) => string;
interface RouteSchema { schema?: unknown; method: string; url: string; httpStatus: string; contentType?: string }
type SerializerCompiler = (route: RouteSchema) => Serialize;
type SerializerFactory = (externalSchemas: unknown, serializerOpts: unknown) => SerializerCompiler;

/** The serializer factory Fastify itself defaults to, resolved from Fastify's own location so it is the same copy. */
function fastifyDefaultSerializerFactory(): SerializerFactory {
  const requireFromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
  const { SerializerSelector } = requireFromFastify('@fastify/fast-json-stringify-compiler') as { SerializerSelector: () => SerializerFactory };
  return SerializerSelector();
}

/** For Fastify's `schemaController.compilersFactory.buildSerializer`: Fastify's default, compiled on first use. */
export function lazySerializerFactory(deferred?: DeferredCompilations): SerializerFactory {
  const eager = fastifyDefaultSerializerFactory();
  return (externalSchemas, serializerOpts) => {
    const compile = eager(externalSchemas, serializerOpts);
    return (route) => {
      let serialize: Serialize | undefined;
      deferred?.add(route.method, route.url, () => serialize === undefined && (serialize = compile(route)) !== undefined);
      return (data) => (serialize ??= compile(route))(data);
    };
  };
}
