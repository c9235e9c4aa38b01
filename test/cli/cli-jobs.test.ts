/**
 * `tollgate upload --jobs`: how many files the built client sends at once, and that its results
 * keep the order the files were given in whatever order the answers come. The service side is a
 * small server speaking `/api/v1/upload/stream`'s events that counts the uploads under way and answers
 * later files sooner; the real service's answers to several files are in cli.test.ts.
 */
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { buildCli, runCli } from '../../harness/cli.js';
import { makeTempDir } from '../helpers/tmp.js';

const FILES = 7;

describe('tollgate upload --jobs', () => {
  let built: Awaited<ReturnType<typeof buildCli>>;
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let server: Server;
  let url: string;
  const files: string[] = [];
  let underWay = 0;
  let mostAtOnce = 0;
  /** The files' indexes in the order their answers were sent. */
  let answered: number[] = [];

  const tollgate = (args: string[]) => runCli(built.main, args, { TOLLGATE_URL: url, TOLLGATE_TOKEN: 'tg_test', XDG_CONFIG_HOME: join(tmp.dir, 'config') });

  const upload = async (args: string[]) => {
    underWay = 0;
    mostAtOnce = 0;
    answered = [];
    const run = await tollgate(['upload', ...files, '--dist', 'bookworm', '--json', ...args]);
    return { run, outcomes: JSON.parse(run.stdout) as Array<{ file: string; status: string; name: string }> };
  };

  before(async () => {
    tmp = await makeTempDir('cli-jobs-');
    for (let i = 0; i < FILES; i++) {
      files.push(join(tmp.dir, `jobs${i}_1.0-1_amd64.deb`));
      await writeFile(files[i]!, `not inspected by the client ${i}\n`);
    }
    built = await buildCli();
    server = createServer((req, res) => {
      if (req.method !== 'POST' || req.url !== '/api/v1/upload/stream') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'not here' }));
        return;
      }
      underWay++;
      mostAtOnce = Math.max(mostAtOnce, underWay);
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const index = Number(/filename="jobs(\d+)_/.exec(Buffer.concat(chunks).toString('latin1'))?.[1]);
        // Later files are answered sooner, so a client that lists answers as they come is caught.
        setTimeout(() => {
          underWay--;
          answered.push(index);
          const status = index === 2 ? 'rejected' : 'published';
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(`event: step\ndata: ${JSON.stringify({ step: 'format', state: 'finished', status: 'passed' })}\n\n`);
          res.end(`event: result\ndata: ${JSON.stringify({ http_status: status === 'rejected' ? 422 : 201, status, name: `jobs${index}`, version: '1.0-1', arch: 'amd64', distribution: 'bookworm' })}\n\n`);
        }, 40 * (FILES - index));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await new Promise((resolve) => server?.close(resolve));
    await built?.remove();
    await tmp?.cleanup();
  });

  it('sends four files at once by default, --jobs N at once, and lists the results in the order given', async () => {
    for (const [args, expected] of [[[], 4], [['--jobs', '3'], 3], [['-j', '1'], 1], [['--jobs', '50'], FILES]] as const) {
      const { run, outcomes } = await upload([...args]);
      assert.equal(mostAtOnce, expected, `${args.join(" ") || "default"}: uploads under way at once\n${run.stderr}`);
      assert.deepEqual(outcomes.map((o) => o.name), files.map((_, i) => `jobs${i}`), 'results in the order the files were given');
      assert.deepEqual(outcomes.map((o) => o.file), files);
      assert.equal(run.code, 4, 'the worst outcome (file 2 rejected) sets the exit code');
      assert.equal(outcomes[2]!.status, 'rejected');
      if (expected > 1) assert.notDeepEqual(answered, [...answered].sort((a, b) => a - b), 'the answers came out of order');
    }
  });

  it('without --json: each file\'s steps and verdict on stderr, the table in the order given', async () => {
    const run = await tollgate(['upload', ...files, '--dist', 'bookworm', '--jobs', '3']);
    assert.equal(run.code, 4, run.stderr);
    for (const [i, file] of files.entries()) {
      const label = file.split('/').pop()!.replaceAll('.', '\\.');
      assert.match(run.stderr, new RegExp(`^${label}: format `, 'm'), `${file}: its step`);
      assert.match(run.stderr, new RegExp(`^${label}: jobs${i} 1\\.0-1 ${i === 2 ? 'rejected' : 'published'} in bookworm$`, 'm'), `${file}: its verdict`);
    }
    const rows = run.stdout.split('\n').filter((line) => /^jobs\d/.test(line));
    assert.deepEqual(rows.map((line) => line.split(/\s+/)[1]), files.map((_, i) => `jobs${i}`));
  });

  it('refuses a --jobs that is not a positive integer', async () => {
    for (const bad of ['0', '-2', 'many']) {
      const { code, stderr } = await tollgate(['upload', files[0]!, '--dist', 'bookworm', '--jobs', bad]);
      assert.notEqual(code, 0);
      assert.match(stderr, /positive integer/);
    }
  });
});
