/**
 * Go build information (Go 1.18+): the linker writes a 32-byte header starting with
 * `\xff Go buildinf:` (pointer size at byte 14, flags at 15; flag 2 = strings inline), followed by
 * two varint-length strings: the Go version and the module information, whose text between two
 * 16-byte sentinels lists `path`, `mod`, `dep` and `=>` (replacement) lines. Older binaries point
 * into the data segment instead and are not read here. The scanner is fed a binary chunk by chunk,
 * so a 100 MB executable is never held in memory.
 */
import { purl } from '../purl.js';
import type { InnerComponent } from '../model.js';

const MAGIC = Buffer.from('\xff Go buildinf:', 'latin1');
const HEADER = 32;
/** Module information of real programs is a few kilobytes; more is not build info. */
const MAX_INFO = 1024 * 1024;
/** Bytes kept from the previous chunk so a header split across chunks is still seen. */
const CARRY = 64;

export interface GoModule {
  path: string;
  version: string;
  sum: string | null;
}

export interface GoBuildInfo {
  goVersion: string;
  path: string | null;
  main: GoModule | null;
  deps: GoModule[];
}

function varint(buf: Buffer, at: number): { value: number; next: number } | null {
  let value = 0;
  for (let shift = 0, i = at; i < buf.length && shift < 35; i++, shift += 7) {
    const b = buf[i]!;
    value += (b & 0x7f) * 2 ** shift;
    if (b < 0x80) return { value, next: i + 1 };
  }
  return null;
}

/** Total bytes of the build info starting at `buf[0]` (the magic), null when it is not one, 0 when more bytes are needed. */
function sizeOf(buf: Buffer): number | null {
  if (buf.length < HEADER + 10) return 0;
  const ptrSize = buf[14];
  const flags = buf[15]!;
  if ((ptrSize !== 4 && ptrSize !== 8) || (flags & 2) === 0) return null;
  const v = varint(buf, HEADER);
  if (!v || v.value === 0 || v.value > 64) return null;
  if (v.next + v.value + 5 > buf.length) return 0;
  if (buf.toString('latin1', v.next, v.next + 2) !== 'go') return null;
  const m = varint(buf, v.next + v.value);
  if (!m || m.value > MAX_INFO) return null;
  return m.next + m.value;
}

export function parseGoBuildInfo(buf: Buffer): GoBuildInfo | null {
  if (!buf.subarray(0, MAGIC.length).equals(MAGIC) || !sizeOf(buf)) return null;
  const v = varint(buf, HEADER)!;
  const goVersion = buf.toString('utf8', v.next, v.next + v.value);
  const m = varint(buf, v.next + v.value)!;
  let info = buf.toString('utf8', m.next, m.next + m.value);
  if (info.length >= 33 && info[info.length - 17] === '\n') info = info.slice(16, -16);
  const result: GoBuildInfo = { goVersion, path: null, main: null, deps: [] };
  let last: GoModule | null = null;
  for (const line of info.split('\n')) {
    const [kind, path, version, sum] = line.split('\t');
    if (kind === 'path' && path) result.path = path;
    else if ((kind === 'mod' || kind === 'dep') && path) {
      last = { path, version: version ?? '', sum: sum ?? null };
      if (kind === 'mod') result.main = last;
      else result.deps.push(last);
    } else if (kind === '=>' && last && path) {
      // A replace directive: the code built is the replacement's.
      last.path = path;
      last.version = version ?? '';
      last.sum = sum ?? null;
    }
  }
  return result;
}

/** Feeds a file's bytes in order; `result()` is the first valid build info seen, if any. */
export class GoBuildInfoScanner {
  private carry = Buffer.alloc(0);
  private capture: Buffer[] | null = null;
  private captured = 0;
  private needed = 0;
  private found: GoBuildInfo | null = null;
  private offset = 0;
  /** False once the first bytes show the file is not an ELF executable: the caller may stop feeding. */
  wanted = true;

  push(chunk: Buffer): void {
    if (!this.wanted || this.found) return;
    if (this.offset === 0 && chunk.length >= 4 && chunk.readUInt32BE(0) !== 0x7f454c46) {
      this.wanted = false;
      return;
    }
    this.offset += chunk.length;
    if (this.capture) {
      this.capture.push(chunk);
      this.captured += chunk.length;
      if (this.captured >= this.needed) this.finishCapture();
      return;
    }
    const window = this.carry.length ? Buffer.concat([this.carry, chunk]) : chunk;
    let at = window.indexOf(MAGIC);
    while (at >= 0) {
      const size = sizeOf(window.subarray(at));
      if (size === 0) {
        // Not enough bytes yet: keep from the candidate on (at most a header and a version string).
        if (window.length - at <= 4096) {
          this.carry = Buffer.from(window.subarray(at));
          return;
        }
      } else if (size !== null) {
        this.needed = size;
        this.capture = [Buffer.from(window.subarray(at))];
        this.captured = window.length - at;
        if (this.captured >= size) this.finishCapture();
        return;
      }
      at = window.indexOf(MAGIC, at + 1);
    }
    this.carry = Buffer.from(window.subarray(Math.max(0, window.length - CARRY)));
  }

  private finishCapture(): void {
    const buf = Buffer.concat(this.capture!);
    this.capture = null;
    this.found = parseGoBuildInfo(buf.subarray(0, this.needed));
    this.wanted = this.found === null;
  }

  result(): GoBuildInfo | null {
    return this.found;
  }
}

function golangPurl(path: string, version: string | null): string {
  const slash = path.lastIndexOf('/');
  return purl({ type: 'golang', namespace: slash > 0 ? path.slice(0, slash) : null, name: path.slice(slash + 1), version });
}

/** The main module (the program) and every module it was built with, as components. */
export function goComponents(info: GoBuildInfo, foundIn: string): InnerComponent[] {
  const out: InnerComponent[] = [];
  const mainPath = info.main?.path ?? info.path;
  if (mainPath) {
    const version = info.main && info.main.version && info.main.version !== '(devel)' ? info.main.version : null;
    out.push({ ecosystem: 'golang', namespace: null, name: mainPath, version, foundIn, purl: golangPurl(mainPath, version), license: null, role: 'main' });
  }
  for (const dep of info.deps) {
    out.push({ ecosystem: 'golang', namespace: null, name: dep.path, version: dep.version || null, foundIn, purl: golangPurl(dep.path, dep.version || null), license: null, role: 'dependency' });
  }
  return out;
}
