import type { Distribution } from '../../distributions.js';

/** Root of a distribution's RPM tree inside the repository, e.g. `rpm/rocky9/x86_64/`. */
/** An RPM distribution publishes one architecture (with its `noarch` packages): see distribution-spec.ts. */
export const rpmTreeRoot = (dist: Pick<Distribution, 'codename' | 'architectures'>) => `rpm/${dist.codename}/${dist.architectures[0]}/`;
