import assert from 'node:assert/strict';
import { PassThrough, Readable, Transform, Writable } from 'node:stream';
import { describe, it } from 'node:test';
import { createGzip } from 'node:zlib';
import tarStream from 'tar-stream';
import { createBoundedDecompressor } from '../../src/domain/compression.js';
import { chainStreams, PrematureCloseError } from '../../src/domain/stream-chain.js';

/** A writer that keeps what it receives. */
function collector(): Writable & { bytes: () => Buffer } {
  const chunks: Buffer[] = [];
  const sink = new Writable({ write(chunk: Buffer, _enc, done) { chunks.push(chunk); done(); } });
  return Object.assign(sink, { bytes: () => Buffer.concat(chunks) });
}

/** Passes chunks on, failing with `error` at the `failAt`-th one. */
function failingAt(failAt: number, error: Error): Transform {
  let seen = 0;
  return new Transform({ transform(chunk, _enc, done) { seen += 1; done(seen === failAt ? error : null, chunk); } });
}

describe('chainStreams', () => {
  it('delivers every byte through the links and settles once the last has finished', async () => {
    const data = Buffer.alloc(3 << 20, 'abc');
    const sink = collector();
    await chainStreams(Readable.from([data.subarray(0, 1 << 20), data.subarray(1 << 20)]), new PassThrough(), new PassThrough(), sink);
    assert.ok(sink.writableFinished);
    assert.ok(sink.bytes().equals(data));
  });

  it('rejects with the first error and destroys every link, so nothing keeps reading or writing', async () => {
    const boom = new Error('boom');
    const source = Readable.from((function* () { for (let i = 0; i < 1000; i++) yield Buffer.alloc(1024, i); })());
    const middle = failingAt(3, boom);
    const sink = collector();
    await assert.rejects(chainStreams(source, middle, sink), (error) => error === boom);
    assert.ok(source.destroyed && middle.destroyed && sink.destroyed);
    assert.ok(sink.bytes().length < 1000 * 1024);
  });

  it('reports a reader destroyed before its end as a premature close', async () => {
    const source = new Readable({ read() {} });
    const sink = collector();
    const chained = chainStreams(source, sink);
    source.push(Buffer.from('part'));
    setImmediate(() => source.destroy());
    await assert.rejects(chained, PrematureCloseError);
    assert.ok(sink.destroyed);
  });

  it('reports a last link destroyed before it finished as a premature close', async () => {
    const source = new Readable({ read() {} });
    const sink = collector();
    const chained = chainStreams(source, sink);
    setImmediate(() => sink.destroy());
    await assert.rejects(chained, PrematureCloseError);
    assert.ok(source.destroyed);
  });

  it('ends in a tar-stream (streamx) extractor as control.tar is read, and passes its errors on', async () => {
    const pack = tarStream.pack();
    pack.entry({ name: './control' }, 'Package: hello\n');
    pack.entry({ name: './md5sums' }, '');
    pack.finalize();
    const gz: Buffer[] = [];
    for await (const chunk of pack.pipe(createGzip())) gz.push(chunk as Buffer);
    const tarGz = Buffer.concat(gz);
    const limits = { maxOutputBytes: 1 << 20, maxRatio: 1000 };

    const names: string[] = [];
    const extract = tarStream.extract();
    extract.on('entry', (header, stream, next) => { names.push(header.name); stream.on('end', next); stream.resume(); });
    await chainStreams(Readable.from([tarGz]), createBoundedDecompressor('gzip', limits, tarGz.length), extract);
    assert.deepEqual(names, ['./control', './md5sums']);

    const cut = tarStream.extract();
    cut.on('entry', (_header, stream, next) => { stream.on('end', next); stream.resume(); });
    const garbage = Buffer.concat([tarGz.subarray(0, 20), Buffer.alloc(64, 0xff)]);
    await assert.rejects(chainStreams(Readable.from([garbage]), createBoundedDecompressor('gzip', limits, garbage.length), cut));
  });
});
