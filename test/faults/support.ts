/**
 * Shared by the fault-injection tests: the real service as a process (its stderr kept for failure
 * messages, its exit noticed), uploads over a real socket, and the checks real clients make of a
 * published APT index (gpgv on InRelease, apt-get update, apt-cache policy).
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { multipartBody } from '../../harness/multipart.js';
import { freePort } from '../../harness/net.js';
import { loginAsInitialAdmin, spawnService, waitFor, waitUntilReady } from '../../harness/service.js';
import { aptSandbox, exec } from '../helpers/apt.js';
import { assertErrorBody } from '../helpers/errors.js';

export const FAST_SERVICE_ENV = { SIGNING_KEY_ALGORITHM: 'ed25519', BCRYPT_ROUNDS: '4', ENV: 'development' };

export interface RunningService {
  base: string;
  port: number;
  child: ChildProcess;
  /** What the process printed on stderr so far (the last 20,000 characters). */
  output(): string;
  /** True once the process exited, for whatever reason. */
  exited(): boolean;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
}

/** Starts src/main.ts on a free port with `dataDir` and waits until /health/ready answers 200. */
export async function startService(dataDir: string, env: Record<string, string> = {}, port?: number): Promise<RunningService> {
  const chosen = port ?? (await freePort());
  const base = `http://127.0.0.1:${chosen}`;
  const child = spawnService(dataDir, chosen, { ...FAST_SERVICE_ENV, ...env });
  let output = '';
  child.stderr?.on('data', (d: Buffer) => {
    output = (output + d.toString('utf8')).slice(-20_000);
  });
  let exited = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => {
    exited = true;
    resolve();
  }));
  const service: RunningService = {
    base,
    port: chosen,
    child,
    output: () => output,
    exited: () => exited,
    kill: async () => {
      if (!exited) child.kill('SIGKILL');
      await exit;
    },
  };
  try {
    await Promise.race([
      waitUntilReady(base, 'the service to be ready', 60_000),
      exit.then(() => Promise.reject(new Error(`the service exited before it was ready:\n${output}`))),
    ]);
  } catch (error) {
    await service.kill();
    throw error;
  }
  return service;
}

export const adminToken = loginAsInitialAdmin;

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  text: string;
}

export async function call(base: string, token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // not JSON: kept as text
  }
  if (res.status >= 400) assertErrorBody(res.status, text, `${method} ${path}`);
  return { status: res.status, body: parsed, text };
}

/** POST /upload over a real socket; every answer >= 400 is checked for the error body. */
export async function uploadFile(base: string, token: string, path: string, distribution = 'jammy'): Promise<Answer> {
  const form = await multipartBody({ distribution }, { path });
  const res = await fetch(`${base}/upload`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...form.headers }, body: form.payload });
  const text = await res.text();
  if (res.status >= 400) assertErrorBody(res.status, text, `upload of ${path}`);
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown>, text };
}

/**
 * Waits until every distribution reports its index up to date (start-up republishes stale ones)
 * and no .deb payload is left to read (each one read re-publishes its distribution's Contents).
 */
export async function waitUpToDate(base: string, token: string, timeoutMs = 60_000): Promise<void> {
  let lastSeen = 'nothing yet';
  await waitFor(async () => {
    const metrics = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    const pending = /^tollgate_deb_payloads_pending (\d+)/m.exec(metrics)?.[1];
    const answer = await call(base, token, 'GET', '/distributions');
    const list = answer.body as unknown as Array<{ codename: string; up_to_date: boolean }>;
    const behind = Array.isArray(list) ? list.filter((d) => !d.up_to_date) : [];
    lastSeen = `payloads pending ${pending}; GET /distributions ${answer.status}; behind: ${JSON.stringify(behind)}`;
    return pending === '0' && Array.isArray(list) && behind.length === 0;
  }, 'every distribution up to date', timeoutMs).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}; last seen: ${lastSeen}`);
  });
}

/**
 * What apt would see: InRelease verifies with gpgv against the served key, `apt-get update`
 * accepts every index file against the signed Release, and each of `names` has a candidate.
 * Returns the names of the packages the index lists.
 */
export async function verifyAptRepository(base: string, workDir: string, codename: string, names: Iterable<string>): Promise<Set<string>> {
  const keyring = join(workDir, `key-${Date.now()}.gpg`);
  await writeFile(keyring, Buffer.from(await (await fetch(`${base}/repo/keys/tollgate.gpg`)).arrayBuffer()));
  const inRelease = join(workDir, `InRelease-${codename}`);
  const released = await fetch(`${base}/repo/apt/dists/${codename}/InRelease`);
  assert.equal(released.status, 200, `InRelease of ${codename}`);
  await writeFile(inRelease, Buffer.from(await released.arrayBuffer()));
  const gpgv = await exec('gpgv', ['--keyring', keyring, inRelease]);
  assert.equal(gpgv.code, 0, `gpgv on ${codename}/InRelease: ${gpgv.stderr}`);

  const apt = await aptSandbox(join(workDir, `apt-${codename}-${Date.now()}`));
  await apt.setSource(`deb [signed-by=${keyring}] ${base}/repo/apt ${codename} main`);
  const update = await apt.update();
  assert.equal(update.code, 0, update.stderr);
  assert.doesNotMatch(update.stderr, /Hash Sum mismatch|W: |E: /);
  for (const name of names) assert.match((await apt.policy(name)).stdout, /Candidate: \d/, `${name} was answered 201 but apt does not see it`);
  const packages = await (await fetch(`${base}/repo/apt/dists/${codename}/main/binary-amd64/Packages`)).text();
  return new Set([...packages.matchAll(/^Package: (.+)$/gm)].map((m) => m[1]!));
}

/** Every file under `dir` whose name marks it as a temp file a writer left behind. */
export async function leftoverTempFiles(dir: string): Promise<string[]> {
  const found = await exec('find', [dir, '-name', '*.tmp', '-type', 'f']);
  return found.stdout.split('\n').filter(Boolean);
}
