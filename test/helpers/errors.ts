import assert from 'node:assert/strict';

const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/**
 * DECISIONS §1: every answer with status >= 400 carries `{detail, code}`: `detail` a non-empty
 * human message, `code` snake_case. Returns the parsed body for further checks.
 */
export function assertErrorBody(status: number, body: string | Buffer, context = ''): Record<string, unknown> {
  const where = context ? ` (${context})` : '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString());
  } catch {
    assert.fail(`status ${status}${where}: the body is not JSON: ${body.toString().slice(0, 200)}`);
  }
  assert.ok(parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed), `status ${status}${where}: the body is not an object`);
  const { detail, code } = parsed as Record<string, unknown>;
  assert.ok(typeof detail === 'string' && detail.trim() !== '', `status ${status}${where}: detail must be a non-empty string, got ${JSON.stringify(detail)}`);
  assert.ok(typeof code === 'string' && SNAKE_CASE.test(code), `status ${status}${where}: code must be snake_case, got ${JSON.stringify(code)}`);
  return parsed as Record<string, unknown>;
}

/** Checks the error body of any response with status >= 400 (HEAD answers have no body). */
export function checkErrorAnswer(method: string, url: string, status: number, body: string | Buffer): void {
  if (status < 400 || method.toUpperCase() === 'HEAD') return;
  assertErrorBody(status, body, `${method.toUpperCase()} ${url}`);
}
