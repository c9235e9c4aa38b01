import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;

/**
 * The real service in its own process (src/main.ts through tsx), on 127.0.0.1:`port` with its
 * own DATA_DIR and rate limits off; `env` adds to or overrides that. SERVICE_NODE_ARGS (space
 * separated) adds Node options Node refuses in NODE_OPTIONS, such as `--cpu-prof` for a profile
 * of the service under a bench.
 */
export function spawnService(dataDir: string, port: number, env: Record<string, string> = {}, stderr: 'pipe' | 'inherit' = 'pipe'): ChildProcess {
  const nodeArgs = (process.env.SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  return spawn(process.execPath, [...nodeArgs, '--import', 'tsx', join(root, 'src', 'main.ts')], {
    cwd: root,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', RATE_LIMITS: 'off', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', stderr],
  });
}

/** Polls `check` every 100 ms until it answers true; throws after `timeoutMs`. */
export async function waitFor(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export const waitUntilReady = (base: string, what = 'the service to be ready', timeoutMs = 30_000) =>
  waitFor(async () => (await fetch(`${base}/health/ready`)).ok, what, timeoutMs);

/** A session of the `admin` account created at first start (its password is in DATA_DIR). */
export async function loginAsInitialAdmin(base: string, dataDir: string): Promise<string> {
  const password = (await readFile(join(dataDir, 'initial-admin-password'), 'utf8')).trim();
  const login = await fetch(`${base}/auth/token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: 'admin', password }) });
  return ((await login.json()) as { access_token: string }).access_token;
}
