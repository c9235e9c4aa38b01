import assert from 'node:assert/strict';
import { mkdir, readFile, readdir, rm, stat, statfs, writeFile } from 'node:fs/promises';
import { exec } from '../helpers/apt.js';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { AuditLog, type AuditEntry, type AuditIndex } from '../../src/adapters/audit/audit-log.js';
import { makeTempDir } from '../helpers/tmp.js';

function memoryIndex(): AuditIndex & { rows: AuditEntry[] } {
  const rows: AuditEntry[] = [];
  return { rows, insert: async (entries) => void rows.push(...entries), maxSeq: async () => rows.at(-1)?.seq ?? 0 };
}

async function writeSome(dir: string, n: number, now?: () => Date) {
  const log = await AuditLog.open(dir, memoryIndex(), now);
  for (let i = 0; i < n; i++) await log.record({ action: 'UPLOAD', user: 'u', result: 'SUCCESS', package: `p${i}`, version: '1.0', detail: `entry ${i}` });
  return log;
}

describe('audit log hash chain', () => {
  it('verifies an untouched chain across day files and restarts', async () => {
    const { dir, cleanup } = await makeTempDir();
    let day = 1;
    const clock = () => new Date(`2026-11-0${day}T12:00:00Z`);
    await writeSome(dir, 3, clock);
    day = 2;
    const log = await writeSome(dir, 3, clock);
    assert.equal((await readdir(dir)).filter((f) => f.endsWith('.jsonl')).length, 2);
    const report = await log.verify();
    assert.deepEqual(report, { ok: true, entries: 6, files: 2, first_broken: null });
    await cleanup();
  });

  it('reports the first edited entry', async () => {
    const { dir, cleanup } = await makeTempDir();
    const log = await writeSome(dir, 5);
    const file = join(dir, (await readdir(dir)).find((f) => f.endsWith('.jsonl'))!);
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    lines[2] = lines[2]!.replace('entry 2', 'entry two');
    await writeFile(file, `${lines.join('\n')}\n`);
    const report = await log.verify();
    assert.equal(report.ok, false);
    assert.equal(report.first_broken?.seq, 3);
    assert.equal(report.first_broken?.line, 3);
    assert.match(report.first_broken!.reason, /hash/);
    await cleanup();
  });

  it('detects a deleted entry and a re-hashed forgery', async () => {
    const { dir, cleanup } = await makeTempDir();
    const log = await writeSome(dir, 5);
    const file = join(dir, (await readdir(dir)).find((f) => f.endsWith('.jsonl'))!);
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n');
    await writeFile(file, `${[...lines.slice(0, 1), ...lines.slice(2)].join('\n')}\n`);
    const deleted = await log.verify();
    assert.equal(deleted.ok, false);
    assert.equal(deleted.first_broken?.seq, 3);
    assert.match(deleted.first_broken!.reason, /sequence gap/);

    // A forger who edits entry 2 and recomputes its own hash still breaks the link to entry 3.
    const { entryHash } = await import('../../src/adapters/audit/audit-log.js');
    const forged = JSON.parse(lines[1]!) as AuditEntry;
    forged.detail = 'nothing to see';
    const { hash: _old, ...rest } = forged;
    forged.hash = entryHash(rest);
    lines[1] = JSON.stringify(forged);
    await writeFile(file, `${lines.join('\n')}\n`);
    const rehashed = await log.verify();
    assert.equal(rehashed.first_broken?.seq, 3);
    assert.match(rehashed.first_broken!.reason, /prev_hash/);
    await cleanup();
  });

  it('indexes entries the file has but the index missed (crash between the two writes)', async () => {
    const { dir, cleanup } = await makeTempDir();
    await writeSome(dir, 4);
    const index = memoryIndex();
    await AuditLog.open(dir, index);
    assert.deepEqual(index.rows.map((r) => r.seq), [1, 2, 3, 4]);
    await cleanup();
  });

  it('writes entries recorded while an append is under way together, in order, each on disk before it resolves', async () => {
    const { dir, cleanup } = await makeTempDir('tollgate-audit-group-');
    try {
      let appends = 0;
      const index = memoryIndex();
      const log = await AuditLog.open(dir, index, () => {
        appends++;
        return new Date();
      });
      const entries = await Promise.all(Array.from({ length: 50 }, (_, i) => log.record({ action: 'UPLOAD', user: 'u', result: 'SUCCESS', package: `p${i}`, version: '1.0' })));
      assert.deepEqual(entries.map((e) => [e.seq, e.package]), Array.from({ length: 50 }, (_, i) => [i + 1, `p${i}`]));
      // The first alone (nothing was under way), the 49 recorded meanwhile in the next.
      assert.equal(appends, 2, 'one clock reading per append');
      const lines = (await readFile(join(dir, (await readdir(dir)).find((f) => f.endsWith('.jsonl'))!), 'utf8')).trimEnd().split('\n');
      assert.deepEqual(lines.map((l) => (JSON.parse(l) as AuditEntry).seq), entries.map((e) => e.seq));
      assert.deepEqual(index.rows.map((r) => r.seq), entries.map((e) => e.seq));
      assert.deepEqual(await log.verify(), { ok: true, entries: 50, files: 1, first_broken: null });
      await log.record({ action: 'LOGIN', user: 'u', result: 'SUCCESS' });
      assert.equal(appends, 3);
    } finally {
      await cleanup();
    }
  });

  it('keeps verifying after retention removed old day files', async () => {
    const { dir, cleanup } = await makeTempDir();
    let now = new Date('2026-01-01T10:00:00Z');
    await writeSome(dir, 2, () => now);
    now = new Date('2026-03-01T10:00:00Z');
    const log = await writeSome(dir, 2, () => now);
    assert.deepEqual(await log.removeOlderThan(30), { files: ['2026-01-01.jsonl'], upToSeq: 2 });
    assert.equal((await log.verify()).ok, true);
    // The anchor is written whole (temp file, fsync, rename) before the day file goes: no temp name is left.
    assert.deepEqual((await readdir(dir)).sort(), ['2026-03-01.jsonl', 'retention-anchor.json']);
    await cleanup();
  });
});

describe('audit log on a full disk', { skip: process.getuid?.() === 0 ? false : 'needs root to mount a tmpfs' }, () => {
  it('drops the part of a line a full disk let through, so the chain still verifies and goes on once space is freed', async (t) => {
    const { dir, cleanup } = await makeTempDir('tollgate-audit-full-');
    const mount = join(dir, 'fs');
    await mkdir(mount);
    const mounted = await exec('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mount]);
    if (mounted.code !== 0) {
      await cleanup();
      return t.skip(`cannot mount a tmpfs: ${mounted.stderr.trim()}`);
    }
    try {
      const index = memoryIndex();
      const log = await AuditLog.open(mount, index);
      const entry = (i: number) => ({ action: 'UPLOAD' as const, user: 'u', result: 'SUCCESS' as const, package: `p${i}`, version: '1.5.0+ds1-1~bpo12+1', detail: `entry ${i} ${'x'.repeat(300)}` });
      const file = async () => join(mount, (await readdir(mount)).find((f) => f.endsWith('.jsonl'))!);
      // Entries until the file ends near the end of a page: the next line fits that page only in part.
      let i = 0;
      await log.record(entry(i++));
      while ((await stat(await file())).size % 4096 < 4096 - 200) await log.record(entry(i++));
      const whole = (await stat(await file())).size;
      const free = await statfs(mount);
      assert.equal((await exec('fallocate', ['-l', String(free.bavail * free.bsize), join(mount, 'ballast')])).code, 0);
      await assert.rejects(log.record(entry(i)), { code: 'ENOSPC' });
      assert.equal((await stat(await file())).size, whole, 'the part written is cut off');
      // Recorded together, several entries are one append: the part of them written is cut off too.
      const together = await Promise.allSettled([0, 1, 2, 3].map(() => log.record(entry(i))));
      assert.deepEqual(together.map((r) => r.status === 'rejected' && (r.reason as { code?: string }).code), ['ENOSPC', 'ENOSPC', 'ENOSPC', 'ENOSPC']);
      assert.equal((await stat(await file())).size, whole, 'the part of several entries written is cut off');
      await rm(join(mount, 'ballast'));
      await log.record(entry(i++));
      await log.record(entry(i++));
      assert.deepEqual(await log.verify(), { ok: true, entries: i, files: 1, first_broken: null });
      assert.deepEqual(index.rows.map((r) => r.seq), Array.from({ length: i }, (_, k) => k + 1));
    } finally {
      await exec('umount', ['-l', mount]);
      await cleanup();
    }
  });
});
