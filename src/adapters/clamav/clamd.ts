/**
 * clamd client over a unix socket or TCP, speaking the NUL-terminated `z` commands:
 * zPING, zVERSION, zRELOAD and zINSTREAM (chunks of <uint32 BE length><bytes>, ended by a
 * zero-length chunk). Every wait is bounded so a stuck daemon cannot hang an upload.
 */
import { createConnection, type Socket } from 'node:net';
import { setImmediate } from 'node:timers/promises';
import type { Readable } from 'node:stream';
import { DomainError } from '../../domain/errors.js';
import { parseScanReply, parseVersionReply } from './protocol.js';
import type { AntivirusScanner, AntivirusVersion, ScanResult } from './scanner.js';

/** Where clamd listens; the same shape as `Config['clamav']`. */
export type ClamdTarget = { socket: string } | { host: string; port: number };

/** Time limits and sizes; the defaults suit production. */
export interface ClamdOptions {
  /** Limit for establishing the connection (default 3000 ms). */
  connectTimeoutMs?: number;
  /** Limit for a PING/VERSION/RELOAD answer (default 10000 ms). */
  commandTimeoutMs?: number;
  /** Longest silence during a scan: clamd not reading, or not answering after the last chunk (default 120000 ms). */
  scanTimeoutMs?: number;
  /** Size of the INSTREAM chunks sent to clamd (default 64 KiB). */
  chunkBytes?: number;
}

const MAX_REPLY_BYTES = 64 * 1024;

/** Raised when clamd closes the socket while we are still writing; the reply then explains why. */
class ConnectionGone extends Error {}

/** Collects one NUL-terminated reply; rejects on silence, early close or socket error. */
class ReplyReader {
  readonly promise: Promise<string>;
  /** True once the reply (or a failure) is known; writers stop sending then. */
  settled = false;
  /** True when the reply failed for silence rather than a hang-up. */
  timedOut = false;
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(socket: Socket, timeoutMs: number, where: string) {
    this.promise = new Promise<string>((resolve, reject) => {
      const finish = (result: { text: string } | { error: DomainError }): void => {
        if (this.settled) return;
        this.settled = true;
        socket.setTimeout(0);
        if ('text' in result) resolve(result.text);
        else reject(result.error);
      };
      const buffered = (): string => Buffer.concat(this.chunks).toString('utf8').replace(/\0+$/, '');
      socket.setTimeout(timeoutMs);
      socket.on('timeout', () => {
        this.timedOut = !this.settled;
        finish({ error: unavailable(`clamd at ${where} did not answer within ${timeoutMs} ms`) });
        socket.destroy();
      });
      socket.on('data', (data: Buffer) => {
        this.chunks.push(data);
        this.size += data.length;
        if (data.includes(0)) finish({ text: buffered() });
        else if (this.size > MAX_REPLY_BYTES) {
          finish({ error: new DomainError('unavailable', 'antivirus_error', 'clamd reply is too long') });
          socket.destroy();
        }
      });
      // A reply that arrived before the close still counts (e.g. the size-limit error).
      const onClosed = (cause: string): void => {
        const text = buffered();
        if (text.trim() !== '') finish({ text });
        else finish({ error: unavailable(`clamd at ${where} closed the connection without an answer (${cause})`) });
      };
      socket.on('error', (err: Error) => onClosed(err.message));
      socket.on('end', () => onClosed('end of stream'));
      socket.on('close', () => onClosed('closed'));
    });
    // The caller may stop listening after a write failure; never leave an unhandled rejection.
    this.promise.catch(() => undefined);
  }
}

/** The clamd implementation of AntivirusScanner. */
export class ClamdScanner implements AntivirusScanner {
  private readonly connectTimeoutMs: number;
  private readonly commandTimeoutMs: number;
  private readonly scanTimeoutMs: number;
  private readonly chunkBytes: number;

  constructor(
    private readonly target: ClamdTarget,
    options: ClamdOptions = {},
  ) {
    this.connectTimeoutMs = options.connectTimeoutMs ?? 3000;
    this.commandTimeoutMs = options.commandTimeoutMs ?? 10_000;
    this.scanTimeoutMs = options.scanTimeoutMs ?? 120_000;
    this.chunkBytes = Math.max(1, options.chunkBytes ?? 64 * 1024);
  }

  /** Human-readable address, e.g. `unix:/run/clamav/clamd.ctl` or `tcp:127.0.0.1:3310`. */
  describe(): string {
    return 'socket' in this.target ? `unix:${this.target.socket}` : `tcp:${this.target.host}:${this.target.port}`;
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.command('PING')) === 'PONG';
    } catch {
      return false;
    }
  }

  async version(): Promise<AntivirusVersion> {
    return parseVersionReply(await this.command('VERSION'));
  }

  async reload(): Promise<void> {
    const reply = await this.command('RELOAD');
    if (reply !== 'RELOADING') {
      throw new DomainError('unavailable', 'antivirus_error', `clamd refused to reload: ${reply.slice(0, 200)}`);
    }
  }

  async scanStream(stream: Readable, name = 'stream'): Promise<ScanResult> {
    let socket: Socket;
    try {
      socket = await this.connect();
    } catch (err) {
      stream.destroy();
      throw err;
    }
    try {
      const reply = new ReplyReader(socket, this.scanTimeoutMs, this.describe());
      let sent = 0;
      let finished = false;
      try {
        await send(socket, Buffer.from('zINSTREAM\0'));
        outer: for await (const chunk of stream as AsyncIterable<Buffer | string>) {
          const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          for (let offset = 0; offset < bytes.length; offset += this.chunkBytes) {
            // clamd answers early only to refuse (size limit, error): stop sending then.
            if (reply.settled) break outer;
            // Let pending socket reads run first: if clamd already answered and closed, a further
            // write fails with EPIPE and Node drops the unread answer along with the socket.
            await setImmediate();
            if (reply.settled) break outer;
            const piece = bytes.subarray(offset, offset + this.chunkBytes);
            sent += piece.length;
            const header = Buffer.alloc(4);
            header.writeUInt32BE(piece.length, 0);
            await send(socket, Buffer.concat([header, piece]));
          }
        }
        if (!reply.settled) {
          await send(socket, Buffer.alloc(4));
          finished = true;
        }
      } catch (err) {
        // A write failed because clamd went away: its reply (or the lack of one) is the error to report.
        // Anything else came from the caller's stream (e.g. a decompression error) and is theirs.
        if (!(err instanceof ConnectionGone)) throw err;
      }
      let text: string;
      try {
        text = await reply.promise;
      } catch (err) {
        // Cut off while still sending: see explainCutOff.
        throw !finished && sent > 0 && !reply.timedOut ? await this.explainCutOff(err, name, sent) : err;
      }
      return parseScanReply(text, name);
    } catch (err) {
      stream.destroy();
      throw err;
    } finally {
      socket.destroy();
    }
  }

  /**
   * clamd hung up mid-stream and its answer was lost. A live clamd only does that when the
   * stream passes StreamMaxLength, so report that; a dead one stays `antivirus_unavailable`.
   */
  private async explainCutOff(original: unknown, name: string, sent: number): Promise<unknown> {
    if (!(await this.ping())) return original;
    return new DomainError(
      'too_large',
      'antivirus_size_limit',
      `clamd closed the connection after ${sent} bytes of ${name}: it is larger than the daemon accepts (clamd StreamMaxLength)`,
    );
  }

  private async command(name: 'PING' | 'VERSION' | 'RELOAD'): Promise<string> {
    const socket = await this.connect();
    try {
      const reply = new ReplyReader(socket, this.commandTimeoutMs, this.describe());
      try {
        await send(socket, Buffer.from(`z${name}\0`));
      } catch (err) {
        if (!(err instanceof ConnectionGone)) throw err;
      }
      return (await reply.promise).trim();
    } finally {
      socket.destroy();
    }
  }

  private connect(): Promise<Socket> {
    const where = this.describe();
    return new Promise<Socket>((resolve, reject) => {
      const socket =
        'socket' in this.target
          ? createConnection({ path: this.target.socket })
          : createConnection({ host: this.target.host, port: this.target.port });
      const fail = (message: string): void => {
        clearTimeout(timer);
        socket.destroy();
        reject(unavailable(message));
      };
      const timer = setTimeout(
        () => fail(`cannot connect to clamd at ${where}: no answer within ${this.connectTimeoutMs} ms`),
        this.connectTimeoutMs,
      );
      const onError = (err: Error): void => fail(`cannot connect to clamd at ${where}: ${err.message}`);
      socket.once('error', onError);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.off('error', onError);
        resolve(socket);
      });
    });
  }
}

/** Builds the clamd scanner for a target (from `CLAMAV_SOCKET` or `CLAMAV_HOST`+`CLAMAV_PORT`). */
export function createClamdScanner(target: ClamdTarget, options: ClamdOptions = {}): ClamdScanner {
  return new ClamdScanner(target, options);
}

/** Writes with backpressure: waits for `drain`, fails fast with ConnectionGone if the socket closes. */
function send(socket: Socket, bytes: Buffer): Promise<void> {
  if (socket.destroyed || !socket.writable) return Promise.reject(new ConnectionGone('clamd connection closed'));
  if (socket.write(bytes)) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const done = (err?: Error): void => {
      socket.off('drain', onDrain);
      socket.off('close', onClose);
      socket.off('error', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onDrain = (): void => done();
    const onClose = (): void => done(new ConnectionGone('clamd connection closed'));
    socket.on('drain', onDrain);
    socket.on('close', onClose);
    socket.on('error', onClose);
  });
}

function unavailable(message: string): DomainError {
  return new DomainError('unavailable', 'antivirus_unavailable', message);
}
