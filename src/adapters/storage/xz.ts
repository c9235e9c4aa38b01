/**
 * xz compression for index files. `@napi-rs/lzma` only stores data (its xz output is larger than
 * the input), so the system `xz` binary does the work, multithreaded and off the event loop;
 * where it is missing we still produce a valid (uncompressed) .xz with @napi-rs/lzma.
 */
import { spawn } from 'node:child_process';
import { xz as napiXz } from '@napi-rs/lzma';
import { DomainError } from '../../domain/errors.js';

/** xz settings. */
export interface XzOptions {
  /**
   * 0-9; default 0. On 40 MB of Packages text (50,000 packages, 2 cores): -0 ~1.6 s, 10.1 MB;
   * -1 ~2.6 s, 9.8 MB; -6 ~20 s, 8.5 MB. Publishing often matters more than the last 20%.
   */
  preset?: number;
  /** Worker threads for xz (`-T`); default 0 = one per core. */
  threads?: number;
  /** Path of the xz binary (default `xz` from PATH). */
  binary?: string;
}

/** Compress `data` to the .xz format. */
export async function compressXz(data: Uint8Array, options: XzOptions = {}): Promise<Buffer> {
  const preset = options.preset ?? 0;
  if (!Number.isInteger(preset) || preset < 0 || preset > 9) throw new DomainError('invalid', 'bad_xz_preset', `xz preset ${preset}`);
  try {
    return await runXz(options.binary ?? 'xz', [`-${preset}`, `-T${options.threads ?? 0}`, '--check=crc64', '-z', '-c', '-q'], data);
  } catch (err) {
    if (typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'ENOENT') return napiXz.compress(data);
    throw err;
  }
}

function runXz(binary: string, args: string[], data: Uint8Array): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => { if (stderr.length < 4096) stderr += c.toString(); });
    child.once('error', reject);
    // EPIPE on stdin is reported through the exit status below.
    child.stdin.once('error', () => undefined);
    child.once('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new DomainError('unavailable', 'xz_failed', `xz exited with ${code}: ${stderr.trim()}`));
    });
    child.stdin.end(data);
  });
}
