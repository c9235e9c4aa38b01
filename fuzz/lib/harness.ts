/**
 * What every fuzz target shares: the rule that only a parser's own typed error may escape, a
 * scratch file for readers that take a path, and the per-input memory guard.
 *
 * Jazzer.js reports any exception the target function throws as a finding and saves the input,
 * so a target catches the typed error and lets everything else through.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type ErrorClass = abstract new (...args: never[]) => Error;

/** Swallows `error` when it is one of `accepted`; anything else (any class, any throwable) is rethrown. */
export function expectOnly(error: unknown, ...accepted: ErrorClass[]): void {
  if (accepted.some((kind) => error instanceof kind)) return;
  throw error;
}

/** A property a target checks on a result (e.g. a round trip): failing it is a finding. */
export class InvariantError extends Error {
  override readonly name = 'InvariantError';
}

export function invariant(condition: unknown, message: () => string): asserts condition {
  if (!condition) throw new InvariantError(message());
}

/** Bytes one input may add to the process's peak resident memory. */
export const MEMORY_LIMIT_BYTES = 256 * 1024 * 1024;

export class MemoryGuardError extends Error {
  override readonly name = 'MemoryGuardError';
}

/** The process's peak resident set size so far (getrusage: it never decreases). */
function peakRss(): number {
  return process.resourceUsage().maxRSS * 1024;
}

function checkMemory(before: number): void {
  const grown = peakRss() - before;
  if (grown > MEMORY_LIMIT_BYTES) {
    throw new MemoryGuardError(`one input raised peak memory by ${Math.round(grown / 1048576)} MB (limit ${MEMORY_LIMIT_BYTES / 1048576} MB)`);
  }
}

/**
 * A synchronous target under the memory guard. The peak RSS is a high-water mark, so the guard
 * sees a spike even when the input freed its memory before returning; libFuzzer's own
 * -rss_limit_mb stops a process whose memory keeps growing.
 */
export function syncTarget(body: (data: Buffer) => void): (data: Buffer) => void {
  return (data) => {
    const before = peakRss();
    body(data);
    checkMemory(before);
  };
}

/** An asynchronous target (readers of files and streams) under the same guard. */
export function asyncTarget(body: (data: Buffer) => Promise<void>): (data: Buffer) => Promise<void> {
  return async (data) => {
    const before = peakRss();
    await body(data);
    checkMemory(before);
  };
}

/** One file per process that a target rewrites with each input (on tmpfs when there is one). */
export function scratchFile(name: string): { path: string; write(data: Buffer): void } {
  const base = process.platform === 'linux' ? '/dev/shm' : tmpdir();
  const dir = join(base, `tollgate-fuzz-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, name);
  return { path, write: (data) => writeFileSync(path, data) };
}

/**
 * Splits an input into at most `count` parts at `separator` bytes: how targets that need several
 * values (version triples, chunk boundaries) read them, so mutations move the boundaries.
 */
export function splitParts(data: Buffer, separator: number, count: number): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  while (parts.length < count - 1) {
    const at = data.indexOf(separator, start);
    if (at < 0) break;
    parts.push(data.subarray(start, at));
    start = at + 1;
  }
  parts.push(data.subarray(start));
  return parts;
}

/**
 * Cuts `text` into chunks whose lengths come from `seed` bytes (1..64 characters each, cycling),
 * to check that a streaming reader answers the same whatever the chunking.
 */
export function chunked(text: string, seed: Buffer): string[] {
  if (seed.length === 0) return [text];
  const chunks: string[] = [];
  let at = 0;
  for (let i = 0; at < text.length; i += 1) {
    const length = 1 + ((seed[i % seed.length] ?? 0) % 64);
    chunks.push(text.slice(at, at + length));
    at += length;
  }
  return chunks;
}

export async function* fromArray<T>(items: readonly T[]): AsyncGenerator<T> {
  for (const item of items) yield item;
}
