/**
 * Every call to the service. The session is an httpOnly cookie the browser sends by itself; this
 * module only adds the session's CSRF token to changes and turns error bodies ({detail, code})
 * into ApiError.
 */
let csrfToken: string | null = null;

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

const SAFE = new Set(['GET', 'HEAD']);

export function requestHeaders(method: string, extra: Record<string, string> = {}): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json', ...extra };
  if (!SAFE.has(method) && csrfToken) headers['x-csrf-token'] = csrfToken;
  return headers;
}

export async function errorOf(response: Response): Promise<ApiError> {
  let body: Record<string, unknown> = {};
  try {
    body = (await response.json()) as Record<string, unknown>;
  } catch {
    // not JSON (a proxy's page): keep the status text
  }
  const detail = typeof body.detail === 'string' ? body.detail : response.statusText || `HTTP ${response.status}`;
  const code = typeof body.code === 'string' ? body.code : `http_${response.status}`;
  return new ApiError(response.status, code, detail, body);
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, credentials: 'same-origin', headers: requestHeaders(method) };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] = 'application/json';
  }
  const response = await fetch(path, init);
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** `?a=1&b=x` from the set values only. */
export function query(params: Record<string, string | number | undefined | null | false>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== '' && value !== false) search.set(key, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

export const enc = encodeURIComponent;
