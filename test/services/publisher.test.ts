/**
 * The publisher on its own, with a recording index writer (the real writers have their own
 * tests): runs are coalesced, an index that only grew is appended to, anything else is rewritten,
 * and a package committed while a full rewrite is under way is never listed twice.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { IndexEntry, IndexWriter } from '../../src/adapters/storage/interfaces.js';
import type { Signer } from '../../src/adapters/signing/signer.js';
import type { Distribution } from '../../src/domain/distributions.js';
import { isoUtc } from '../../src/domain/time.js';
import { deletePackageRow, insertPackage, type PackageRow } from '../../src/adapters/db/packages.table.js';
import { Publisher } from '../../src/services/publishing/publisher.js';
import { indexFingerprint } from '../helpers/index-fingerprint.js';
import { backends, startTestApp, type TestApp } from '../helpers/app.js';
import { waitFor } from '../../harness/service.js';

/** An index kept as a list of entries, recording how each run wrote it. */
class RecordingWriter implements IndexWriter {
  entries: string[] = [];
  runs: Array<'full' | 'append'> = [];
  /** Called once while the next full rewrite is under way, before it reads its entries. */
  duringNextFullWrite: (() => Promise<void>) | null = null;

  async write(_dist: Distribution, entries: readonly IndexEntry[]): Promise<void> {
    this.entries = entries.map((e) => e.text);
    this.runs.push('full');
  }

  async writeBatches(_dist: Distribution, batches: AsyncIterable<readonly IndexEntry[]>): Promise<void> {
    const hook = this.duringNextFullWrite;
    this.duringNextFullWrite = null;
    if (hook) await hook();
    const all: string[] = [];
    for await (const batch of batches) all.push(...batch.map((e) => e.text));
    this.entries = all;
    this.runs.push('full');
  }

  async append(_dist: Distribution, entries: readonly IndexEntry[]): Promise<boolean> {
    this.entries.push(...entries.map((e) => e.text));
    this.runs.push('append');
    return true;
  }
}

/** Fails its next `failuresLeft` writes of one distribution, as a disk or database gone for a moment would. */
class FailingWriter extends RecordingWriter {
  constructor(
    private readonly codename: string,
    public failuresLeft: number,
  ) {
    super();
  }

  private failNow(dist: Distribution): void {
    if (dist.codename === this.codename && this.failuresLeft > 0) {
      this.failuresLeft -= 1;
      throw new Error('disk gone');
    }
  }

  /** The entries of each distribution (a retry publishes every stale one through this writer). */
  readonly indexes = new Map<string, string[]>();

  override async writeBatches(dist: Distribution, batches: AsyncIterable<readonly IndexEntry[]>): Promise<void> {
    this.failNow(dist);
    await super.writeBatches(dist, batches);
    this.indexes.set(dist.codename, this.entries);
  }

  override async append(dist: Distribution, entries: readonly IndexEntry[]): Promise<boolean> {
    this.failNow(dist);
    this.indexes.set(dist.codename, [...(this.indexes.get(dist.codename) ?? []), ...entries.map((e) => e.text)]);
    return true;
  }
}

for (const backend of backends()) {
  describe(`publisher (${backend})`, () => {
    let t: TestApp;
    let writer: RecordingWriter;
    let publisher: Publisher;
    const codename = 'focal';

    const row = (name: string): PackageRow => {
      const now = isoUtc();
      const sha = randomUUID().replace(/-/g, '').padEnd(64, '0');
      return {
        id: randomUUID(), distribution: codename, format: 'deb', name, version: '1.0+b1', arch: 'amd64', component: 'main', status: 'published', cve_status: 'not_scanned',
        sha256: sha, upload_sha256: sha, upload_size: 1, signed_by: null, sha512: '0', sha1: '0', md5: '0', size: 1, filename: `${name}.deb`, pool_path: `apt/pool/main/${name[0]}/${name}/${name}_1.0+b1_amd64.deb`,
        source_name: name, source_version: '1.0+b1', metadata: '{}', index_entry: `Package: ${name}`, relations: '{}', files: '[]', pipeline: '[]',
        findings: '{}', reasons: '[]', uploaded_by: null, sla_deadline: null, seq: 0, created_at: now, updated_at: now,
      };
    };
    const add = async (name: string) => {
      const r = row(name);
      await t.ctx.db.transaction().execute((trx) => insertPackage(trx, r, []));
      return r;
    };

    before(async () => {
      t = await startTestApp({ backend });
      writer = new RecordingWriter();
      const signer = { fingerprint: 'test' } as unknown as Signer;
      publisher = new Publisher(t.ctx.db, t.ctx.dialect, { deb: writer, rpm: writer }, async () => signer, t.ctx.metrics, t.ctx.log);
    });
    after(() => t.close());

    it('writes in full first, then appends what was only added, and rewrites after a removal', async () => {
      await add('pub-a');
      await publisher.request(codename);
      assert.deepEqual(writer.runs, ['full']);
      await add('pub-b');
      await add('pub-c');
      await publisher.request(codename);
      assert.deepEqual(writer.runs, ['full', 'append']);
      assert.deepEqual(writer.entries, ['Package: pub-a', 'Package: pub-b', 'Package: pub-c']);
      const b = await t.ctx.db.selectFrom('packages').selectAll().where('name', '=', 'pub-b').executeTakeFirstOrThrow();
      await t.ctx.db.transaction().execute((trx) => deletePackageRow(trx, { ...b, seq: Number(b.seq), size: Number(b.size) }));
      await publisher.request(codename);
      assert.deepEqual(writer.runs.at(-1), 'full');
      assert.deepEqual(writer.entries, ['Package: pub-a', 'Package: pub-c']);
    });

    it('coalesces requests made during a run into one more run that sees all of them', async () => {
      writer.runs = [];
      // The first run is held until every later request is made (a fixed delay was outrun by
      // slow inserts on a loaded machine, making a third run).
      let release = () => {};
      const held = new Promise<void>((r) => (release = r));
      let entered = () => {};
      const running = new Promise<void>((r) => (entered = r));
      writer.duringNextFullWrite = async () => {
        entered();
        await held;
      };
      publisher.forget(codename);
      const first = publisher.request(codename);
      await running;
      const names = ['pub-d', 'pub-e', 'pub-f', 'pub-g'];
      const later: Array<Promise<void>> = [];
      for (const name of names) {
        await add(name);
        later.push(publisher.request(codename));
      }
      release();
      await Promise.all([first, ...later]);
      assert.equal(writer.runs.length, 2, `${writer.runs.length} runs for 5 requests`);
      for (const name of names) assert.ok(writer.entries.includes(`Package: ${name}`), name);
    });

    it('never lists a package twice when it is committed while a full rewrite runs', async () => {
      publisher.forget(codename);
      writer.duringNextFullWrite = async () => {
        await add('pub-raced');
      };
      await publisher.request(codename); // full: the raced row is committed before the entries are read
      await add('pub-after');
      await publisher.request(codename);
      const listed = writer.entries.filter((e) => e === 'Package: pub-raced').length;
      assert.equal(listed, 1, `pub-raced listed ${listed} times: ${writer.runs.join(', ')}`);
      assert.ok(writer.entries.includes('Package: pub-after'));
      const rows = await t.ctx.db.selectFrom('packages').select('name').where('distribution', '=', codename).execute();
      assert.equal(writer.entries.length, rows.length);
    });

    it('leaves a package committed after a run read its generation to the next run, which appends it rather than rewriting', async () => {
      publisher.forget(codename);
      writer.duringNextFullWrite = async () => {
        await add('pub-late');
      };
      await publisher.request(codename);
      assert.ok(!writer.entries.includes('Package: pub-late'), 'listed by a run that started before its generation');
      const runs = writer.runs.length;
      // Nothing added since: this run finds the generation ahead of the one published, and the
      // late package is all that is new. (Once, the first run listed it while recording the older
      // generation, and this run, finding nothing new, rewrote the whole index.)
      await publisher.request(codename);
      assert.deepEqual(writer.runs.slice(runs), ['append']);
      assert.equal(writer.entries.filter((e) => e === 'Package: pub-late').length, 1);
      const rows = await t.ctx.db.selectFrom('packages').select('name').where('distribution', '=', codename).execute();
      assert.equal(writer.entries.length, rows.length);
    });

    it('fingerprints exactly the indexed rows, whatever the other rows of the distribution', async () => {
      const quarantined = { ...row('fp-q'), status: 'quarantined' as const };
      await t.ctx.db.transaction().execute((trx) => insertPackage(trx, quarantined, []));
      await add('fp-a');
      const exception = { ...row('fp-e'), status: 'exception' as const };
      await t.ctx.db.transaction().execute((trx) => insertPackage(trx, exception, []));
      const naive = await t.ctx.db
        .selectFrom('packages')
        .select(['seq'])
        .where('distribution', '=', codename)
        .where('status', 'in', ['published', 'accepted_risk', 'exception'])
        .execute();
      const seqs = naive.map((r) => Number(r.seq));
      assert.deepEqual(await indexFingerprint(t.ctx.db, codename), {
        count: seqs.length,
        sum: seqs.reduce((a, b) => a + b, 0),
        max: Math.max(...seqs),
        mod: seqs.reduce((a, b) => a + (b % 65521), 0),
      });
      // A package leaving the index by a status change (no row removed) is not an addition.
      await publisher.request(codename);
      const runs = writer.runs.length;
      await t.ctx.db.updateTable('packages').set({ status: 'quarantined' }).where('name', '=', 'fp-a').execute();
      await add('fp-b');
      await publisher.request(codename);
      assert.equal(writer.runs.length, runs + 1);
      assert.equal(writer.runs.at(-1), 'full');
      assert.ok(!writer.entries.includes('Package: fp-a') && writer.entries.includes('Package: fp-b'));
    });

    it('publishes a distribution whose run failed again by itself, until it succeeds, and not after stop()', async () => {
      const failing = new FailingWriter(codename, 2);
      const signer = { fingerprint: 'test' } as unknown as Signer;
      const retrying = new Publisher(t.ctx.db, t.ctx.dialect, { deb: failing, rpm: failing }, async () => signer, t.ctx.metrics, t.ctx.log, { firstMs: 20, maxMs: 80 });
      await add('retried-1');
      // Nobody asks again: the caller of the failed run got its error (an upload answered 503).
      await assert.rejects(retrying.request(codename), /disk gone/);
      await waitFor(async () => !(await retrying.stale()).includes(codename), 'the failed distribution published again');
      assert.equal(failing.failuresLeft, 0, 'it failed twice more before the third try succeeded');
      assert.ok(failing.indexes.get(codename)?.includes('Package: retried-1'));

      retrying.stop();
      failing.failuresLeft = 1;
      await add('retried-2');
      await assert.rejects(retrying.request(codename), /disk gone/);
      await new Promise((r) => setTimeout(r, 300));
      assert.ok((await retrying.stale()).includes(codename), 'a stopped publisher tried again');
      assert.ok(!failing.indexes.get(codename)?.includes('Package: retried-2'));
      // Leaves the distribution published for whatever runs next.
      await retrying.request(codename);
    });
  });
}
