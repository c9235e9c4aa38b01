import type { FastifyInstance } from 'fastify';
import { badRequest } from './errors.js';

function containsNul(value: unknown, depth = 0): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (depth > 32 || value === null || typeof value !== 'object') return false;
  if (Buffer.isBuffer(value)) return false;
  const items = Array.isArray(value) ? value : Object.entries(value).flat();
  return items.some((v) => containsNul(v, depth + 1));
}

/**
 * NUL characters are refused in every parameter and JSON string: no text column stores them
 * (PostgreSQL refuses them outright) and no name, version or path legitimately holds one.
 */
export function installInputGuard(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    if (containsNul(request.params) || containsNul(request.query) || containsNul(request.body)) {
      throw badRequest('invalid_characters', 'NUL characters are not allowed in parameters or bodies');
    }
  });
}
