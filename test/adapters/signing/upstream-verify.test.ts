/** Upstream signatures made by real gpg: accepted with the right key, refused otherwise. */
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { keyFingerprints, readUpstreamKeys, verifyCleartext, verifyDetached } from '../../../src/adapters/signing/upstream-verify.js';
import { makeTempDir } from '../../helpers/tmp.js';
import { buildAptRepo, buildRpmRepo, makeGpgKey, type GpgKey } from '../../../harness/upstream.js';

describe('upstream signature verification', () => {
  let tmp: { dir: string; cleanup: () => Promise<void> };
  let key: GpgKey;
  let other: GpgKey;
  const apt = () => join(tmp.dir, 'apt/dists/stable');
  before(async () => {
    tmp = await makeTempDir('tollgate-upstream-sig-');
    key = await makeGpgKey(join(tmp.dir, 'k1'));
    other = await makeGpgKey(join(tmp.dir, 'k2'), 'Other <other@example.org>');
    await buildAptRepo(join(tmp.dir, 'apt'), key, [{ name: 'alpha', version: '1.0' }]);
    await buildRpmRepo(join(tmp.dir, 'rpm'), key, [{ name: 'rpm-alpha', version: '1.0' }]);
  });
  after(() => tmp.cleanup());

  it('answers exactly the signed Release text of a gpg --clearsign InRelease', async () => {
    const text = await verifyCleartext(await readFile(join(apt(), 'InRelease'), 'utf8'), key.armoredPublic);
    assert.equal(text, await readFile(join(apt(), 'Release'), 'utf8'));
  });

  it('refuses a wrong key, a tampered InRelease and unsigned text', async () => {
    const inRelease = await readFile(join(apt(), 'InRelease'), 'utf8');
    await assert.rejects(verifyCleartext(inRelease, other.armoredPublic), { code: 'signature_invalid' });
    const tampered = inRelease.replace(/^(\s[0-9a-f]{64})/m, (line) => line.replace(/[0-9a-f]/, (c) => (c === 'a' ? 'b' : 'a')));
    assert.notEqual(tampered, inRelease);
    await assert.rejects(verifyCleartext(tampered, key.armoredPublic), { code: 'signature_invalid' });
    await assert.rejects(verifyCleartext(await readFile(join(apt(), 'Release'), 'utf8'), key.armoredPublic), { code: 'signature_invalid' });
  });

  it('verifies Release + Release.gpg and repomd.xml + repomd.xml.asc (detached, armored)', async () => {
    const release = await readFile(join(apt(), 'Release'));
    await verifyDetached(release, await readFile(join(apt(), 'Release.gpg')), key.armoredPublic);
    const repomd = await readFile(join(tmp.dir, 'rpm/repodata/repomd.xml'));
    const asc = await readFile(join(tmp.dir, 'rpm/repodata/repomd.xml.asc'));
    await verifyDetached(repomd, asc, key.armoredPublic);
    await assert.rejects(verifyDetached(repomd, asc, other.armoredPublic), { code: 'signature_invalid' });
    const changed = Buffer.from(repomd.toString('utf8').replace('<revision>', '<revision>1'));
    await assert.rejects(verifyDetached(changed, asc, key.armoredPublic), { code: 'signature_invalid' });
    await assert.rejects(verifyDetached(repomd, Buffer.from('not a signature'), key.armoredPublic), { code: 'signature_invalid' });
  });

  it('reads key blocks and refuses what is not one', async () => {
    await writeFile(join(tmp.dir, 'both.asc'), key.armoredPublic + other.armoredPublic);
    const both = await readFile(join(tmp.dir, 'both.asc'), 'utf8');
    assert.equal((await keyFingerprints(both)).length, 2);
    // A block holding both keys verifies what either signed.
    await verifyCleartext(await readFile(join(apt(), 'InRelease'), 'utf8'), both);
    await assert.rejects(readUpstreamKeys('hello'), { code: 'invalid_key' });
  });
});
