import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import tar from 'tar-stream';
import { ClamdScanner } from '../../../src/adapters/clamav/clamd.js';
import { DomainError } from '../../../src/domain/errors.js';
import { EICAR, EICAR_SIGNATURE, startClamd, type RunningClamd } from '../../helpers/clamd.js';

/** A tar archive holding the given files (what a .deb's data.tar member contains). */
async function tarOf(files: Record<string, string | Buffer>): Promise<Buffer> {
  const pack = tar.pack();
  for (const [name, body] of Object.entries(files)) pack.entry({ name, mode: 0o644 }, body);
  pack.finalize();
  const parts: Buffer[] = [];
  for await (const part of pack) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

/** A cpio "newc" archive, the format of an RPM payload. */
function cpioOf(files: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  const pad = (length: number): Buffer => Buffer.alloc((4 - (length % 4)) % 4);
  const entry = (name: string, body: Buffer, mode: number): void => {
    const nameBytes = Buffer.from(`${name}\0`);
    const fields = [1, mode, 0, 0, 1, 0, body.length, 0, 0, 0, 0, nameBytes.length, 0];
    const header = Buffer.from(`070701${fields.map((f) => f.toString(16).toUpperCase().padStart(8, '0')).join('')}`);
    parts.push(header, nameBytes, pad(header.length + nameBytes.length), body, pad(body.length));
  };
  for (const [name, body] of Object.entries(files)) entry(name, Buffer.from(body), 0o100644);
  entry('TRAILER!!!', Buffer.alloc(0), 0);
  return Buffer.concat(parts);
}

function xz(data: Buffer): Buffer {
  const result = spawnSync('xz', ['-c', '-T1'], { input: data, maxBuffer: 64 * 1024 * 1024 });
  assert.equal(result.status, 0, String(result.stderr));
  return result.stdout;
}

/** `total` bytes of harmless filler, produced lazily in 1 MiB pieces. */
function filler(total: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      const size = Math.min(1024 * 1024, total - sent);
      sent += size;
      this.push(Buffer.alloc(size, 0x61));
    },
  });
}

function isCode(code: string): (e: unknown) => boolean {
  return (e: unknown) => {
    assert.ok(e instanceof DomainError, `expected DomainError, got ${String(e)}`);
    assert.equal(e.code, code, e.message);
    return true;
  };
}

describe('ClamdScanner against a real clamd', () => {
  let clamd: RunningClamd;
  let scanner: ClamdScanner;

  before(async () => {
    clamd = await startClamd({ tcp: true, streamMaxLength: '4M' });
    scanner = new ClamdScanner({ socket: clamd.socket });
  });
  after(async () => {
    await clamd?.stop();
  });

  it('answers ping', async () => {
    assert.equal(await scanner.ping(), true);
  });

  it('reports the engine version; a custom database has no signature version', async () => {
    const v = await scanner.version();
    assert.match(v.engine, /^\d+\.\d+\.\d+/);
    assert.match(v.raw, /^ClamAV /);
    assert.equal(v.signatures, null);
    assert.equal(v.signatureDate, null);
  });

  it('finds a clean stream clean', async () => {
    assert.deepEqual(await scanner.scanStream(Readable.from([Buffer.from('just a readme\n')]), 'README'), { clean: true });
  });

  it('detects EICAR', async () => {
    const result = await scanner.scanStream(Readable.from([Buffer.from(EICAR)]), 'eicar.com');
    assert.equal(result.clean, false);
    assert.ok(!result.clean && result.signature.startsWith(EICAR_SIGNATURE), JSON.stringify(result));
  });

  it('detects EICAR split over many tiny INSTREAM chunks', async () => {
    const small = new ClamdScanner({ socket: clamd.socket }, { chunkBytes: 7 });
    const result = await small.scanStream(Readable.from([Buffer.from(EICAR.slice(0, 30)), Buffer.from(EICAR.slice(30))]));
    assert.equal(result.clean, false);
  });

  it('detects EICAR as a file inside a data.tar.gz member', async () => {
    const data = gzipSync(await tarOf({ './usr/share/doc/pkg/README': 'hello\n', './usr/share/pkg/eicar.txt': EICAR }));
    const result = await scanner.scanStream(Readable.from([data]), 'data.tar.gz');
    assert.equal(result.clean, false, 'EICAR inside data.tar.gz was not found');
    // The same archive without EICAR is clean: the detection comes from the file, not the container.
    const clean = gzipSync(await tarOf({ './usr/share/doc/pkg/README': 'hello\n' }));
    assert.deepEqual(await scanner.scanStream(Readable.from([clean]), 'data.tar.gz'), { clean: true });
  });

  it('detects EICAR embedded in a larger file inside a data.tar.xz member', async () => {
    const data = xz(await tarOf({ './usr/bin/tool': Buffer.concat([Buffer.alloc(5000, 1), Buffer.from(EICAR), Buffer.alloc(5000, 2)]) }));
    const result = await scanner.scanStream(Readable.from([data]), 'data.tar.xz');
    assert.equal(result.clean, false, 'EICAR inside data.tar.xz was not found');
  });

  it('detects EICAR inside a cpio payload (RPM)', async () => {
    const payload = cpioOf({ './usr/share/a.txt': 'hello\n', './usr/share/eicar.txt': EICAR });
    const result = await scanner.scanStream(Readable.from([payload]), 'payload.cpio');
    assert.equal(result.clean, false, 'EICAR inside cpio was not found');
  });

  it('streams a 3 MiB clean file with backpressure', async () => {
    assert.deepEqual(await scanner.scanStream(filler(3 * 1024 * 1024), 'big.bin'), { clean: true });
  });

  it('reports a stream over StreamMaxLength as antivirus_size_limit, without hanging', async () => {
    const started = Date.now();
    await assert.rejects(scanner.scanStream(filler(16 * 1024 * 1024), 'huge.bin'), isCode('antivirus_size_limit'));
    assert.ok(Date.now() - started < 10_000);
    assert.equal(await scanner.ping(), true, 'clamd still answers after the refusal');
  });

  it('passes an error of the source stream through unchanged', async () => {
    const broken = new Readable({
      read() {
        this.destroy(new Error('decompression failed'));
      },
    });
    await assert.rejects(scanner.scanStream(broken), /decompression failed/);
  });

  it('works over TCP', async () => {
    assert.ok(clamd.tcpPort);
    const tcp = new ClamdScanner({ host: '127.0.0.1', port: clamd.tcpPort });
    assert.equal(await tcp.ping(), true);
    assert.match((await tcp.version()).engine, /^\d+\./);
    assert.equal((await tcp.scanStream(Readable.from([Buffer.from(EICAR)]))).clean, false);
    assert.deepEqual(await tcp.scanStream(Readable.from([Buffer.from('ok')])), { clean: true });
    await assert.rejects(tcp.scanStream(filler(16 * 1024 * 1024)), isCode('antivirus_size_limit'));
  });

  it('reloads the database and then uses a newly added signature', async () => {
    const marker = 'TOLLGATE-RELOAD-TEST-MARKER-0123456789';
    const stream = () => Readable.from([Buffer.from(`prefix ${marker} suffix`)]);
    assert.deepEqual(await scanner.scanStream(stream()), { clean: true });
    await writeFile(join(clamd.dbDir, 'reload-test.ndb'), `Tollgate-Reload-Test:0:*:${Buffer.from(marker).toString('hex')}\n`);
    await scanner.reload();
    const deadline = Date.now() + 15_000;
    let result = await scanner.scanStream(stream());
    while (result.clean && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      result = await scanner.scanStream(stream());
    }
    assert.ok(!result.clean && result.signature.startsWith('Tollgate-Reload-Test'), JSON.stringify(result));
  });

  it('fails fast with antivirus_unavailable when clamd hangs', async () => {
    const impatient = new ClamdScanner({ socket: clamd.socket }, { commandTimeoutMs: 300, scanTimeoutMs: 300 });
    process.kill(clamd.pid, 'SIGSTOP');
    try {
      const started = Date.now();
      assert.equal(await impatient.ping(), false);
      await assert.rejects(impatient.version(), isCode('antivirus_unavailable'));
      await assert.rejects(impatient.scanStream(Readable.from([Buffer.from(EICAR)])), isCode('antivirus_unavailable'));
      // Stalled while still sending (socket buffers full): unavailable, not mistaken for the size limit.
      await assert.rejects(impatient.scanStream(filler(3 * 1024 * 1024)), isCode('antivirus_unavailable'));
      assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`);
    } finally {
      process.kill(clamd.pid, 'SIGCONT');
    }
    assert.equal(await scanner.ping(), true);
  });

  // Must stay last: it stops the daemon.
  it('reports antivirus_unavailable quickly once clamd is stopped', async () => {
    await clamd.stop();
    const started = Date.now();
    assert.equal(await scanner.ping(), false);
    await assert.rejects(scanner.version(), isCode('antivirus_unavailable'));
    const source = Readable.from([Buffer.from(EICAR)]);
    await assert.rejects(scanner.scanStream(source), isCode('antivirus_unavailable'));
    assert.equal(source.destroyed, true, 'the source stream is released');
    const tcp = new ClamdScanner({ host: '127.0.0.1', port: clamd.tcpPort ?? 1 });
    await assert.rejects(tcp.scanStream(Readable.from([Buffer.from('x')])), isCode('antivirus_unavailable'));
    assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
  });
});
