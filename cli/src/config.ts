/**
 * Where the client finds the service and its credentials: command-line flags, then the
 * environment (TOLLGATE_URL, TOLLGATE_TOKEN, TOLLGATE_CA_BUNDLE), then the file `tollgate login`
 * writes (`$XDG_CONFIG_HOME/tollgate/config.json`, mode 0600 because it holds a token).
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { UsageError } from './errors.js';

export interface StoredConfig {
  url?: string;
  token?: string;
  /** When the stored token stops working (a login session); absent for an API token. */
  token_expires_at?: string;
  ca_bundle?: string;
}

export interface GlobalOptions {
  url?: string;
  token?: string;
  caBundle?: string;
  insecure?: boolean;
  json?: boolean;
}

export interface Connection {
  /** The service's base URL with `/api/v1` appended. */
  apiBase: string;
  serviceUrl: string;
  token: string | null;
  caBundle: string | null;
  insecure: boolean;
}

export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  return join(base, 'tollgate', 'config.json');
}

export async function readStoredConfig(path = configPath()): Promise<StoredConfig> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as StoredConfig;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new UsageError(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/** Written to a temporary file created 0600, then renamed: the token is never readable by others, even briefly. */
export async function writeStoredConfig(config: StoredConfig, path = configPath()): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, path);
}

/** The bare service URL, checked: http or https only, no path beyond an optional `/api` or `/api/v1`. */
export function normaliseServiceUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`not a URL: ${raw}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(`the service URL must be http:// or https://, not ${url.protocol}`);
  const path = url.pathname.replace(/\/+$/, '').replace(/\/api(\/v1)?$/, '');
  return `${url.origin}${path}`;
}

export async function resolveConnection(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<Connection> {
  const stored = await readStoredConfig(configPath(env));
  const rawUrl = options.url ?? env.TOLLGATE_URL ?? stored.url;
  if (!rawUrl) throw new UsageError('no service URL: pass --url, set TOLLGATE_URL or run "tollgate login --url URL"');
  const serviceUrl = normaliseServiceUrl(rawUrl);
  const token = options.token ?? env.TOLLGATE_TOKEN ?? (stored.url && normaliseServiceUrl(stored.url) === serviceUrl ? stored.token : undefined) ?? null;
  return {
    serviceUrl,
    apiBase: `${serviceUrl}/api/v1`,
    token,
    caBundle: options.caBundle ?? env.TOLLGATE_CA_BUNDLE ?? stored.ca_bundle ?? null,
    insecure: options.insecure === true,
  };
}
