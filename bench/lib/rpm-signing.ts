/**
 * RPM signing cost for benchmarks: Tollgate's signer (signRpmToTemp, as admission signs an
 * upload) and the peer tool, `rpmsign --addsign` with a throwaway gpg key, over the same sample
 * of packages; and `rpm -K` checks, so a broken signer cannot produce a figure.
 */
import { copyFile, mkdir, mkdtemp, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { signRpmToTemp } from '../../src/adapters/signing/rpm-signatures.js';
import type { Signer } from '../../src/adapters/signing/signer.js';
import { runPool } from './pool.js';
import { runMeasured, runQuiet } from './proc.js';
import { median } from './timing.js';

/** One signer's figures over a sample. */
export interface SigningFigures {
  /** Per-package times (ms); null when only a total is known (one rpmsign call for the sample). */
  perPackageMs: number[] | null;
  totalMs: number;
  /** Bytes of the unsigned sample packages. */
  bytes: number;
  count: number;
}

export const meanMs = (f: SigningFigures): number => f.totalMs / f.count;
export const medianMs = (f: SigningFigures): number | null => (f.perPackageMs ? median(f.perPackageMs) : null);
/** Megabytes (10^6 bytes) of input signed per second. */
export const megabytesPerSecond = (f: SigningFigures): number => f.bytes / 1e6 / (f.totalMs / 1000);

/** `count` paths spread evenly over `paths`. */
export function evenSample(paths: readonly string[], count: number): string[] {
  const n = Math.min(count, paths.length);
  return Array.from({ length: n }, (_, i) => paths[Math.floor((i * paths.length) / n)]!);
}

async function totalBytes(paths: readonly string[]): Promise<number> {
  const sizes = await runPool(paths, 16, async (p) => (await stat(p)).size);
  return sizes.reduce((a, b) => a + b, 0);
}

/**
 * `rpm -K` (and `-Kv`) of `files` against `publicKeyArmored`, imported into a throwaway rpm
 * database: every file must say "signatures OK" with `signatures` OK signature lines each.
 */
export async function assertRpmVerifies(files: readonly string[], publicKeyArmored: string, signatures: number, label: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-rpmdb-'));
  try {
    await writeFile(join(dir, 'key.asc'), publicKeyArmored);
    await runQuiet('rpm', ['--dbpath', join(dir, 'db'), '--import', join(dir, 'key.asc')]);
    const brief = await runQuiet('rpm', ['--dbpath', join(dir, 'db'), '-K', ...files]).catch((e: { stdout?: string }) => e.stdout ?? String(e));
    const verbose = await runQuiet('rpm', ['--dbpath', join(dir, 'db'), '-Kv', ...files]).catch((e: { stdout?: string }) => e.stdout ?? String(e));
    const lines = brief.trim().split('\n');
    const ok = lines.length === files.length && lines.every((l) => / signatures OK$/.test(l));
    const sigOk = (verbose.match(/Signature, key ID [0-9a-f]+: OK/g) ?? []).length;
    if (!ok || sigOk !== signatures * files.length || /NOT OK|BAD|NOKEY/.test(verbose)) {
      throw new Error(`${label}: rpm -K does not accept the signatures:\n${brief}\n${verbose}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Tollgate: signs each package with signRpmToTemp (read, two signatures, copy written, hashed
 * and fsynced, as at admission), one at a time, into `tempDir`, deleting each copy (not timed).
 * The first `warmUp` packages are signed untimed first and their copies checked with rpm -K.
 */
export async function tollgateSigning(sample: readonly string[], signer: Signer, tempDir: string, label: string, warmUp = 5): Promise<SigningFigures> {
  await mkdir(tempDir, { recursive: true });
  const checked: string[] = [];
  for (const p of sample.slice(0, warmUp)) checked.push((await signRpmToTemp(p, signer, tempDir)).file.path);
  await assertRpmVerifies(checked, signer.publicKeyArmored, 2, label);
  await Promise.all(checked.map((p) => unlink(p)));
  const perPackageMs: number[] = [];
  for (const p of sample) {
    const start = performance.now();
    const signed = await signRpmToTemp(p, signer, tempDir);
    perPackageMs.push(performance.now() - start);
    await unlink(signed.file.path);
  }
  return { perPackageMs, totalMs: perPackageMs.reduce((a, b) => a + b, 0), bytes: await totalBytes(sample), count: sample.length };
}

/** A throwaway gpg home with one passphrase-less signing key. */
export interface GpgKey {
  home: string;
  publicKeyArmored: string;
  close(): Promise<void>;
}

const GPG_UID = 'Bench <bench@example.invalid>';

export async function throwawayGpgKey(algo: 'rsa4096' | 'ed25519'): Promise<GpgKey> {
  // Under /tmp: gpg-agent's socket path must stay short.
  const home = await mkdtemp(join(tmpdir(), 'bench-gpg-'));
  const gpg = (...args: string[]) => runQuiet('gpg', ['--batch', '--homedir', home, ...args]);
  await gpg('--pinentry-mode', 'loopback', '--passphrase', '', '--quick-gen-key', GPG_UID, algo, 'sign', 'never');
  const publicKeyArmored = await gpg('--armor', '--export', 'bench@example.invalid');
  return {
    home,
    publicKeyArmored,
    async close() {
      await runQuiet('gpgconf', ['--homedir', home, '--kill', 'gpg-agent']).catch(() => undefined);
      await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * rpmsign: fresh copies of the sample in `dir`, signed in place by one `rpmsign --addsign` call
 * for all of them (per package: total / N). `rpmv3` adds the header+payload signature, as
 * Tollgate writes; without it rpm 4.18 writes the header-only one. Every copy is checked with rpm -K.
 */
export async function rpmsignSigning(sample: readonly string[], key: GpgKey, dir: string, rpmv3: boolean, label: string): Promise<SigningFigures> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const copies = await runPool(sample, 16, async (p) => {
    const copy = join(dir, basename(p));
    await copyFile(p, copy);
    return copy;
  });
  const args = ['--addsign', ...(rpmv3 ? ['--rpmv3'] : []), '-D', '_gpg_name bench@example.invalid', '-D', `_gpg_path ${key.home}`, '-D', '__gpg /usr/bin/gpg'];
  const run = await runMeasured('rpmsign', [...args, ...copies]);
  await assertRpmVerifies(copies, key.publicKeyArmored, rpmv3 ? 2 : 1, label);
  await rm(dir, { recursive: true, force: true });
  return { perPackageMs: null, totalMs: run.ms, bytes: await totalBytes(sample), count: sample.length };
}
