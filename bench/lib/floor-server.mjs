// The upload floor's server (bench/upload-floor.ts): the least an upload service can do with a
// tiny package on this machine, in the framework Tollgate uses. TIER=receive parses the multipart
// body and drops the file; TIER=durable also hashes it with the four digests APT indexes name,
// writes it, fsyncs it, renames it into a pool folder and fsyncs that folder; TIER=row also inserts
// one SQLite row (WAL, synchronous=NORMAL, as Tollgate runs it). Each answers 201 with a JSON body.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify from 'fastify';
import multipart from '@fastify/multipart';
import Database from 'better-sqlite3';

const tier = process.env.TIER ?? 'receive';
const dir = process.env.DIR;
await mkdir(join(dir, 'tmp'), { recursive: true });
await mkdir(join(dir, 'pool'), { recursive: true });
const db = new Database(join(dir, 'floor.db'));
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('create table if not exists packages (id integer primary key, sha256 text unique, size integer)');
const insert = db.prepare('insert into packages (sha256, size) values (?, ?)');
const poolDir = open(join(dir, 'pool'), 'r');

const app = Fastify({ logger: false });
// Large packages: no file size limit (the plugin's default is 1 MiB).
await app.register(multipart, { limits: { fileSize: 4 * 2 ** 30 } });
app.post('/upload', async (request, reply) => {
  let sha256 = '';
  let size = 0;
  for await (const part of request.parts()) {
    if (part.type !== 'file') continue;
    if (tier === 'receive') {
      for await (const chunk of part.file) size += chunk.length;
      continue;
    }
    const hashes = ['md5', 'sha1', 'sha256', 'sha512'].map((algorithm) => createHash(algorithm));
    const temp = join(dir, 'tmp', randomBytes(8).toString('hex'));
    const handle = await open(temp, 'w');
    // Written 1 MiB at a time, as Tollgate gathers its writes.
    let gathered = [];
    let gatheredBytes = 0;
    for await (const chunk of part.file) {
      size += chunk.length;
      for (const hash of hashes) hash.update(chunk);
      gathered.push(chunk);
      gatheredBytes += chunk.length;
      if (gatheredBytes >= 1 << 20) {
        await handle.writev(gathered);
        gathered = [];
        gatheredBytes = 0;
      }
    }
    if (gathered.length > 0) await handle.writev(gathered);
    await handle.datasync();
    await handle.close();
    sha256 = hashes.map((hash) => hash.digest('hex'))[2];
    await rename(temp, join(dir, 'pool', `${sha256}-${randomBytes(4).toString('hex')}`));
    await (await poolDir).datasync();
  }
  if (tier === 'row') insert.run(sha256 + randomBytes(4).toString('hex'), size);
  reply.code(201);
  return { status: 'published', size };
});
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
console.log('ready');
