import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withResignedLayout, type RpmPackage } from '../../../src/domain/rpm/package.js';
import { admissionSigning, RPM_SIGNATURE_POLICIES } from '../../../src/domain/rpm/signature-policy.js';

describe('RPM signature policy', () => {
  it('signs unless a signed upload is kept; refuses only unsigned uploads under refuse_unsigned', () => {
    const table = RPM_SIGNATURE_POLICIES.flatMap((policy) => [false, true].map((signed) => `${policy}/${signed ? 'signed' : 'unsigned'}: ${admissionSigning(policy, signed).action}`));
    assert.deepEqual(table, [
      'replace/unsigned: sign',
      'replace/signed: sign',
      'keep/unsigned: sign',
      'keep/signed: keep',
      'refuse_unsigned/unsigned: refuse',
      'refuse_unsigned/signed: sign',
    ]);
    const refused = admissionSigning('refuse_unsigned', false);
    assert.equal(refused.action === 'refuse' && refused.code, 'rpm_signature_missing');
  });

  it('a re-signed copy moves the main header and changes the size, nothing else', () => {
    const pkg = { name: 'x', packageSize: 1000, headerStart: 1200, headerEnd: 5000, payloadOffset: 5000, installedSize: 7 } as RpmPackage;
    assert.deepEqual(withResignedLayout(pkg, { headerStart: 1400, headerEnd: 5200, fileSize: 1200 }), {
      name: 'x', packageSize: 1200, headerStart: 1400, headerEnd: 5200, payloadOffset: 5200, installedSize: 7,
    });
  });
});
