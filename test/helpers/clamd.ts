/**
 * Starts a real, throwaway clamd (Debian clamav-daemon) for tests. The official signature
 * databases cannot be downloaded here, so the database holds only EICAR signatures:
 * a whole-file MD5 (.hdb) and a body signature (.ndb) that also finds EICAR embedded in a
 * larger file. clamd unpacks tar, cpio, gzip and xz itself, so EICAR inside a data.tar.gz is found.
 */
import { createHash } from 'node:crypto';
import { access, constants, mkdir, writeFile } from 'node:fs/promises';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { makeTempDir } from './tmp.js';
import { startDaemon } from './daemon.js';
import { freePort } from '../../harness/net.js';

export const CLAMD_BINARY = '/usr/sbin/clamd';

/** The 68-byte EICAR anti-virus test file: harmless, detected by every engine. */
export const EICAR = 'X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*';
export const EICAR_SIGNATURE = 'Eicar-Test-Signature';

export interface ClamdOptionsForTest {
  /** Also listen on TCP 127.0.0.1:<free port>. */
  tcp?: boolean;
  /** clamd StreamMaxLength, e.g. `1M` (clamd default 25M). */
  streamMaxLength?: string;
}

export interface RunningClamd {
  socket: string;
  tcpPort?: number;
  dbDir: string;
  /** The clamd process id (tests may SIGSTOP it to simulate a hung daemon). */
  pid: number;
  /** Everything clamd printed so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

/** Starts clamd in the foreground with a config in a temp dir; resolves once it answers PING. */
export async function startClamd(options: ClamdOptionsForTest = {}): Promise<RunningClamd> {
  try {
    await access(CLAMD_BINARY, constants.X_OK);
  } catch {
    throw new Error(`${CLAMD_BINARY} is missing: install the Debian package clamav-daemon to run these tests`);
  }
  const { dir, cleanup } = await makeTempDir('tollgate-clamd-');
  const dbDir = join(dir, 'db');
  await mkdir(dbDir);
  const md5 = createHash('md5').update(EICAR).digest('hex');
  await writeFile(join(dbDir, 'tollgate-test.hdb'), `${md5}:${EICAR.length}:${EICAR_SIGNATURE}\n`);
  const hex = Buffer.from(EICAR).toString('hex');
  // Target type 0 = any file, offset * = anywhere: EICAR embedded in a larger file matches too.
  await writeFile(join(dbDir, 'tollgate-test.ndb'), `${EICAR_SIGNATURE}:0:*:${hex}\n`);

  const socket = join(dir, 'clamd.sock');
  const tcpPort = options.tcp ? await freePort() : undefined;
  const lines = [
    `LocalSocket ${socket}`,
    'LocalSocketMode 600',
    'FixStaleSocket true',
    `DatabaseDirectory ${dbDir}`,
    `TemporaryDirectory ${dir}`,
    `PidFile ${join(dir, 'clamd.pid')}`,
    `LogFile ${join(dir, 'clamd.log')}`,
    'Foreground true',
    'SelfCheck 3600',
    'ScanArchive true',
    // As the README advises: RELOAD blocks until the new signatures are active, so the VERSION the
    // update asks for afterwards answers only once they are (the default reloads in the background).
    'ConcurrentDatabaseReload no',
    ...(tcpPort !== undefined ? [`TCPSocket ${tcpPort}`, 'TCPAddr 127.0.0.1'] : []),
    ...(options.streamMaxLength ? [`StreamMaxLength ${options.streamMaxLength}`] : []),
  ];
  const configFile = join(dir, 'clamd.conf');
  await writeFile(configFile, `${lines.join('\n')}\n`);

  const daemon = await startDaemon({
    name: 'clamd',
    binary: CLAMD_BINARY,
    args: ['--foreground', `--config-file=${configFile}`],
    ready: () => answersPing(socket),
    timeoutMs: 30_000,
    pollMs: 100,
    cleanup,
  });
  return {
    socket,
    tcpPort,
    dbDir,
    pid: daemon.child.pid ?? -1,
    output: daemon.output,
    stop: daemon.stop,
  };
}

function answersPing(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ path });
    let reply = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('zPING\0'));
    socket.on('data', (d: Buffer) => {
      reply += d.toString();
      if (reply.includes('\0')) done(reply.startsWith('PONG'));
    });
    socket.on('end', () => done(false));
  });
}
