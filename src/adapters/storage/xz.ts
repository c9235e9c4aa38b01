/**
 * xz compression of whole index files, by the system `xz` binary (package xz-utils, installed
 * on every Debian system): multithreaded, streaming, off the event loop. Small additions are
 * compressed in-process with liblzma instead (apt-index-files.ts), where a process start would
 * cost more than the work.
 */
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
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

/** A running compressor: write the text to `stdin`, read the .xz from `stdout`. */
export interface XzProcess {
  stdin: Writable;
  stdout: Readable;
  /** Resolves when xz exited cleanly; rejects with `xz_failed` otherwise. */
  done: Promise<void>;
  kill(): void;
}

/** Starts `xz` compressing its standard input (CRC64 check, as apt-index-files expects). */
export function startXz(options: XzOptions = {}): XzProcess {
  const preset = options.preset ?? 0;
  if (!Number.isInteger(preset) || preset < 0 || preset > 9) throw new DomainError('invalid', 'bad_xz_preset', `xz preset ${preset}`);
  const child = spawn(options.binary ?? 'xz', [`-${preset}`, `-T${options.threads ?? 0}`, '--check=crc64', '-z', '-c', '-q'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => { if (stderr.length < 2048) stderr += c.toString(); });
  // EPIPE on stdin is reported through the exit status below.
  child.stdin.on('error', () => undefined);
  const done = new Promise<void>((resolve, reject) => {
    child.once('error', (error) => reject(new DomainError('unavailable', 'xz_failed', `xz could not be started: ${error.message}`)));
    child.once('close', (code) => (code === 0 ? resolve() : reject(new DomainError('unavailable', 'xz_failed', `xz exited with ${code}: ${stderr.trim()}`))));
  });
  return { stdin: child.stdin, stdout: child.stdout, done, kill: () => child.kill() };
}
