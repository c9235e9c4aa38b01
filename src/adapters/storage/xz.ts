/**
 * xz compression of whole index files, by the system `xz` binary (package xz-utils, installed
 * on every Debian system): multithreaded, streaming, off the event loop. Small additions are
 * compressed in-process with liblzma instead (apt-index-files.ts), where a process start would
 * cost more than the work. And the decoding of large payloads read in the background (Debian's
 * xz 5.4 decodes ~1.7× as fast as the liblzma 5.2.3 lzma-native bundles).
 */
import { spawn, spawnSync } from 'node:child_process';
import { Duplex, type Readable, type Writable } from 'node:stream';
import { DecoderFailure, DomainError } from '../../domain/errors.js';

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

/** `xz` with piped standard streams, and the start of what it writes to standard error. */
function spawnXz(binary: string, args: string[]) {
  const child = spawn(binary, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => { if (stderr.length < 2048) stderr += c.toString(); });
  // A write after xz gave up (EPIPE) is reported through its exit status.
  child.stdin.on('error', () => undefined);
  return { child, stderr: () => stderr.trim() };
}

/** Starts `xz` compressing its standard input (CRC64 check, as apt-index-files expects). */
export function startXz(options: XzOptions = {}): XzProcess {
  const preset = options.preset ?? 0;
  if (!Number.isInteger(preset) || preset < 0 || preset > 9) throw new DomainError('invalid', 'bad_xz_preset', `xz preset ${preset}`);
  const { child, stderr } = spawnXz(options.binary ?? 'xz', [`-${preset}`, `-T${options.threads ?? 0}`, '--check=crc64', '-z', '-c', '-q']);
  const done = new Promise<void>((resolve, reject) => {
    child.once('error', (error) => reject(new DomainError('unavailable', 'xz_failed', `xz could not be started: ${error.message}`)));
    child.once('close', (code) => (code === 0 ? resolve() : reject(new DomainError('unavailable', 'xz_failed', `xz exited with ${code}: ${stderr()}`))));
  });
  return { stdin: child.stdin, stdout: child.stdout, done, kill: () => child.kill() };
}

/**
 * The system `xz` decoding its standard input, as a stream: compressed bytes in, decoded bytes
 * out. As liblzma's stream decoder with lzma-native's CONCATENATED flag reads it: .xz only (no
 * legacy .lzma), concatenated streams and stream padding, every integrity check, 256 MiB of
 * decoder memory at most. The output ends only once xz has exited cleanly; a non-zero exit (corrupt
 * or truncated input) fails the stream with xz's message, and an xz that could not start or was
 * killed by a signal fails it with a DecoderFailure (not the input's fault). Destroying the stream
 * kills xz.
 */
export function startXzDecoder(binary = 'xz'): Duplex {
  const { child, stderr } = spawnXz(binary, ['--decompress', '--stdout', '--format=xz', '--memlimit-decompress=256MiB', '--quiet']);
  const stream = new Duplex({
    write(chunk: Buffer, _encoding, callback) {
      child.stdin.write(chunk, () => callback());
    },
    final(callback) {
      child.stdin.end(() => callback());
    },
    read() {
      child.stdout.resume();
    },
    destroy(error, callback) {
      if (child.exitCode === null && child.signalCode === null) child.kill();
      callback(error);
    },
  });
  child.stdout.on('data', (chunk: Buffer) => {
    if (!stream.push(chunk)) child.stdout.pause();
  });
  // 'close' comes once xz has exited and its output has ended (every chunk pushed).
  child.once('close', (code, signal) => {
    if (stream.destroyed) return;
    if (code === 0) stream.push(null);
    else if (code === null) stream.destroy(new DecoderFailure(`xz was killed (${signal ?? 'no status'})`));
    else stream.destroy(new Error(`xz: ${stderr() || `exit status ${code}`}`));
  });
  child.once('error', (error) => stream.destroy(new DecoderFailure(`xz could not run: ${error.message}`)));
  return stream;
}

let systemXz: boolean | undefined;
const decodeWithSystemXz = () => startXzDecoder();

/**
 * `startXzDecoder`, when this machine's `xz` runs (checked once), else null: the caller then
 * decodes in-process. A decoder that cannot start would otherwise read as a corrupt payload.
 */
export function systemXzDecoder(): (() => Duplex) | null {
  systemXz ??= spawnSync('xz', ['--version'], { encoding: 'utf8', timeout: 5000 }).stdout?.startsWith('xz (XZ Utils) 5.') === true;
  return systemXz ? decodeWithSystemXz : null;
}

/**
 * Decompression limits with the system's xz as their xz decoder where it runs: for the large
 * xz streams read while requests are being answered (payloads, upstream indexes), which liblzma
 * in-process would decode on the event loop or, on the thread pool, at ~60 % of xz's speed.
 */
export function withSystemXz<T extends object>(limits: T): T & { xzDecoder?: () => Duplex } {
  const xzDecoder = systemXzDecoder();
  return xzDecoder ? { ...limits, xzDecoder } : limits;
}
