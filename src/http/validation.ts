import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { DeferredCompilations } from './deferred-compilations.js';

function makeAjv(coerceTypes: boolean | 'array') {
  const ajv = new Ajv({
    coerceTypes,
    // Unknown fields are refused (additionalProperties: false in the schemas), never dropped silently.
    removeAdditional: false,
    useDefaults: true,
    allErrors: false,
    strict: false,
    // Checking each schema against the JSON Schema meta-schema compiled that meta-schema at the
    // first request of the process (~26 ms per instance, measured on GET /import/resolve); the
    // schemas are TypeBox's, and test/http/route-schemas.test.ts checks every one of them.
    validateSchema: false,
  });
  addFormats.default(ajv);
  return ajv;
}

interface JsonSchemaNode {
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchemaNode[];
  properties?: Record<string, JsonSchemaNode>;
}

/** The string constants a schema allows (`Type.Union` of literals, `enum`, `const`), or null if it allows anything else. */
function stringConstants(node: JsonSchemaNode): string[] | null {
  if (typeof node.const === 'string') return [node.const];
  if (Array.isArray(node.enum)) return node.enum.every((v) => typeof v === 'string') ? (node.enum as string[]) : null;
  if (Array.isArray(node.anyOf)) {
    const parts = node.anyOf.map(stringConstants);
    return parts.every((p) => p !== null) ? parts.flat() as string[] : null;
  }
  return null;
}

/** For each enumerated property: its values by their lower-case spelling. */
function enumSpellings(schema: JsonSchemaNode): Array<[string, Map<string, string>]> {
  return Object.entries(schema.properties ?? {}).flatMap(([name, node]) => {
    const values = stringConstants(node);
    return values ? [[name, new Map(values.map((v) => [v.toLowerCase(), v]))] as [string, Map<string, string>]] : [];
  });
}

/**
 * People type `?severity=Critical` or `?result=success`: enumerated query and path values are
 * matched without regard to case and replaced by the declared spelling before validation, so
 * handlers and answers only ever see the canonical value.
 */
function caseInsensitiveEnums(validate: ValidateFunction, schema: JsonSchemaNode): ValidateFunction {
  const enums = enumSpellings(schema);
  if (enums.length === 0) return validate;
  const wrapped = ((data: unknown) => {
    if (data && typeof data === 'object') {
      const record = data as Record<string, unknown>;
      for (const [name, spellings] of enums) {
        const value = record[name];
        if (typeof value === 'string') record[name] = spellings.get(value.toLowerCase()) ?? value;
      }
    }
    const valid = validate(data);
    wrapped.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  return Object.assign(wrapped, { schema: validate.schema });
}

/**
 * Query strings and path parameters arrive as text and are coerced to their declared types;
 * JSON bodies are not: `"active": "yes"` is a 422, not a silent conversion.
 */
export function validatorCompiler(deferred?: DeferredCompilations): RequestValidatorCompiler {
  const coercing = makeAjv('array');
  const exact = makeAjv(false);
  const schemas: RequestValidatorCompiler['schemas'] = [];
  const compiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart, method, url }) => {
    schemas.push({ schema, httpPart: httpPart ?? '', method, url });
    const { validate, compileNow } = compiledOnFirstUse(() => {
      if (httpPart === 'body') return exact.compile(schema as object);
      return caseInsensitiveEnums(coercing.compile(schema as object), schema as JsonSchemaNode);
    });
    deferred?.add(method, url, compileNow);
    return validate as ReturnType<FastifySchemaCompiler<unknown>>;
  };
  return Object.assign(compiler, { schemas });
}

/** The compiler, with every request schema it was given (the schemas Fastify holds anyway), for test/http/route-schemas.test.ts. */
export type RequestValidatorCompiler = FastifySchemaCompiler<unknown> & {
  schemas: Array<{ schema: unknown; httpPart: string; method: string; url: string }>;
};

/**
 * Fastify asks for the validators of every route at start-up (and the API is mounted under three
 * prefixes); compiled there, Ajv's generated code for all of them stays in memory although a
 * service answers a fraction of its routes. Compiled at a route's first request instead: same
 * validator, same answers, `errors` read by Fastify after a failed call as before.
 */
function compiledOnFirstUse(compile: () => ValidateFunction): { validate: ValidateFunction; compileNow: () => boolean } {
  let validate: ValidateFunction | undefined;
  const lazy = ((data: unknown) => {
    validate ??= compile();
    const valid = validate(data);
    lazy.errors = validate.errors;
    return valid;
  }) as ValidateFunction;
  // For DeferredCompilations: true when this call compiled it.
  const compileNow = () => validate === undefined && (validate = compile()) !== undefined;
  return { validate: lazy, compileNow };
}
