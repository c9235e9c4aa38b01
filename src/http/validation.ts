import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function makeAjv(coerceTypes: boolean | 'array') {
  const ajv = new Ajv({
    coerceTypes,
    // Unknown fields are refused (additionalProperties: false in the schemas), never dropped silently.
    removeAdditional: false,
    useDefaults: true,
    allErrors: false,
    strict: false,
  });
  addFormats.default(ajv);
  return ajv;
}

/**
 * Query strings and path parameters arrive as text and are coerced to their declared types;
 * JSON bodies are not: `"active": "yes"` is a 422, not a silent conversion.
 */
export function validatorCompiler(): FastifySchemaCompiler<unknown> {
  const coercing = makeAjv('array');
  const exact = makeAjv(false);
  return ({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? exact : coercing;
    return ajv.compile(schema as object) as ReturnType<FastifySchemaCompiler<unknown>>;
  };
}
