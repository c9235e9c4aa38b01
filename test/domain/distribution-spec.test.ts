import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { distributionFromSpec, DistributionSpecError, specOf } from '../../src/domain/distribution-spec.js';
import { componentFor, findDistribution, indexArchitecturesOf } from '../../src/domain/distributions.js';

const problemsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof DistributionSpecError);
    return error.problems.map((p) => `${p.loc.join('.')}: ${p.msg}`);
  }
  assert.fail('expected a DistributionSpecError');
};

describe('distribution definitions', () => {
  it('completes a new APT definition with the defaults', () => {
    const d = distributionFromSpec({ codename: 'acme', format: 'deb' }, null);
    assert.deepEqual([d.components, d.architectures, d.suite, d.origin, d.label, d.private, d.builtIn], [['main'], ['amd64'], 'acme', 'Tollgate', 'Tollgate', false, false]);
    assert.deepEqual(distributionFromSpec(specOf(d), null), d, 'what specOf writes reads back the same');
  });

  it('reports every problem with its field', () => {
    const problems = problemsOf(() => distributionFromSpec({ codename: 'Acme/../x', format: 'zip', components: ['main', 'main'], architectures: [], private: 'yes', origin: 'a\nb' }, null));
    assert.deepEqual(problems.map((p) => p.split(':')[0]).sort(), ['architectures', 'codename', 'components', 'format', 'origin', 'private']);
  });

  it('knows each format’s architectures and lets RPM distributions list several (one tree each) and no components', () => {
    assert.match(problemsOf(() => distributionFromSpec({ codename: 'a', format: 'deb', architectures: ['x86_64'] }, null))[0]!, /not one of amd64, arm64/);
    assert.deepEqual(distributionFromSpec({ codename: 'a', format: 'rpm', architectures: ['x86_64', 'aarch64'] }, null).architectures, ['x86_64', 'aarch64']);
    assert.match(problemsOf(() => distributionFromSpec({ codename: 'a', format: 'rpm', architectures: ['x86_64', 'arm64'] }, null))[0]!, /"arm64" not one of x86_64, aarch64/);
    assert.match(problemsOf(() => distributionFromSpec({ codename: 'a', format: 'rpm', components: ['main'] }, null))[0]!, /no components/);
    assert.deepEqual(distributionFromSpec({ codename: 'a', format: 'rpm', architectures: ['ppc64le'] }, null).components, []);
  });

  it('changes a definition but never its codename or format', () => {
    const jammy = findDistribution('jammy')!;
    const changed = distributionFromSpec({ architectures: ['amd64', 'arm64'], private: true }, jammy);
    assert.deepEqual([changed.codename, changed.format, changed.architectures, changed.private, changed.builtIn], ['jammy', 'deb', ['amd64', 'arm64'], true, true]);
    assert.deepEqual(problemsOf(() => distributionFromSpec({ codename: 'other', format: 'rpm' }, jammy)).map((p) => p.split(':')[0]).sort(), ['codename', 'format']);
  });

  it('routes architecture-independent packages to every architecture and checks components', () => {
    const d = distributionFromSpec({ codename: 'a', format: 'deb', components: ['main', 'testing'], architectures: ['amd64', 'arm64'] }, null);
    assert.deepEqual(indexArchitecturesOf(d, 'all'), ['amd64', 'arm64']);
    assert.deepEqual(indexArchitecturesOf(d, 'arm64'), ['arm64']);
    assert.deepEqual(indexArchitecturesOf(d, 'i386'), []);
    assert.equal(componentFor(d, null), 'main');
    assert.equal(componentFor(d, 'testing'), 'testing');
    assert.throws(() => componentFor(d, 'security'), /component security is not one of a's \(main, testing\)/);
    assert.equal(componentFor(findDistribution('rocky9')!, null), 'main');
    assert.throws(() => componentFor(findDistribution('rocky9')!, 'testing'), /no components/);
  });
});
