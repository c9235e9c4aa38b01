/**
 * `BlobStore` on a local folder. Every relative path is checked before use: no absolute paths,
 * no `.`/`..` segments, no backslashes or NULs, and the real (symlink-resolved) location must stay
 * under the root — a symlink planted in the pool cannot make us read, write or delete outside it.
 */
import { createReadStream } from 'node:fs';
import { lstat, mkdir, readdir, realpath, rm, stat } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { DomainError } from '../../domain/errors.js';
import { isErrno, moveIntoPlace } from './atomic.js';
import type { BlobStore } from './blob-store.js';

const MAX_PATH_CHARS = 1024;
const MAX_SEGMENT_BYTES = 255;

/** Validate a blob path and return its segments; throws DomainError `bad_blob_path`. */
export function checkBlobPath(relPath: string): string[] {
  const bad = (why: string): DomainError =>
    new DomainError('invalid', 'bad_blob_path', `invalid storage path ${JSON.stringify(relPath.slice(0, 200))}: ${why}`);
  if (typeof relPath !== 'string' || relPath === '') throw bad('empty');
  if (relPath.length > MAX_PATH_CHARS) throw bad('too long');
  if (relPath.startsWith('/')) throw bad('absolute');
  if (/[\\\0]/.test(relPath)) throw bad('backslash or NUL');
  const segments = relPath.split('/');
  for (const s of segments) {
    if (s === '' || s === '.' || s === '..') throw bad('empty, . or .. segment');
    if (Buffer.byteLength(s) > MAX_SEGMENT_BYTES) throw bad('segment too long');
  }
  return segments;
}

export class FsBlobStore implements BlobStore {
  private realRoot: Promise<string> | null = null;

  /** A store rooted at `root` (created on first use). */
  constructor(readonly root: string) {}

  async put(tempFile: string, relPath: string): Promise<void> {
    const target = this.resolve(relPath);
    // Check before mkdir (so mkdir never walks through an escaping symlink) and after (races).
    await this.assertInside(dirname(target));
    await mkdir(dirname(target), { recursive: true });
    await this.assertInside(dirname(target));
    await moveIntoPlace(tempFile, target);
  }

  async open(relPath: string): Promise<Readable> {
    const target = this.resolve(relPath);
    let real: string;
    try {
      real = await realpath(target);
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) throw notFound(relPath);
      throw err;
    }
    await this.assertInside(real);
    if (!(await stat(real)).isFile()) throw notFound(relPath);
    return createReadStream(real);
  }

  async remove(relPath: string): Promise<void> {
    const target = this.resolve(relPath);
    await this.assertInside(dirname(target));
    const info = await lstat(target).catch((err: unknown) => {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) return null;
      throw err;
    });
    if (info === null) return;
    if (info.isDirectory()) throw new DomainError('invalid', 'bad_blob_path', `${relPath} is a folder`);
    await rm(target, { force: true }); // unlinks a symlink itself, never its target
  }

  async exists(relPath: string): Promise<boolean> {
    const target = this.resolve(relPath);
    try {
      await this.assertInside(dirname(target));
      return (await lstat(target)).isFile();
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) return false;
      throw err;
    }
  }

  async list(prefix?: string): Promise<string[]> {
    const base = prefix === undefined || prefix === '' ? [] : checkBlobPath(prefix.replace(/\/+$/, ''));
    const out: string[] = [];
    const walk = async (segments: string[]): Promise<void> => {
      let entries;
      try {
        entries = await readdir(join(this.root, ...segments), { withFileTypes: true });
      } catch (err) {
        if (isErrno(err, 'ENOENT', 'ENOTDIR')) return;
        throw err;
      }
      for (const e of entries) {
        if (e.name.startsWith('.')) continue; // temp files being written
        // Symlinks are neither followed nor listed: the pool holds regular files only.
        if (e.isDirectory()) await walk([...segments, e.name]);
        else if (e.isFile()) out.push([...segments, e.name].join('/'));
      }
    };
    if (base.length > 0) await this.assertInside(join(this.root, ...base));
    await walk(base);
    return out.sort();
  }

  private resolve(relPath: string): string {
    return join(this.root, ...checkBlobPath(relPath));
  }

  /** Resolve symlinks along the deepest existing ancestor of `path` and require it under the root. */
  private async assertInside(path: string): Promise<void> {
    if (this.realRoot === null) {
      this.realRoot = mkdir(this.root, { recursive: true }).then(() => realpath(this.root));
      this.realRoot.catch(() => { this.realRoot = null; });
    }
    const root = await this.realRoot;
    let probe = path;
    for (;;) {
      try {
        const real = await realpath(probe);
        if (real !== root && !real.startsWith(root + sep)) {
          throw new DomainError('invalid', 'bad_blob_path', 'storage path escapes the pool root');
        }
        return;
      } catch (err) {
        if (!isErrno(err, 'ENOENT')) throw err;
        const parent = dirname(probe);
        if (parent === probe) throw err;
        probe = parent;
      }
    }
  }
}

function notFound(relPath: string): DomainError {
  return new DomainError('not_found', 'blob_not_found', `no blob at ${relPath}`);
}
