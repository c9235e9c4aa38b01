import type { Distribution } from '../../distributions.js';

/** Root of a distribution's RPM tree inside the repository, e.g. `rpm/rocky9/x86_64/`. */
export const rpmTreeRoot = (dist: Pick<Distribution, 'codename' | 'architecture'>) => `rpm/${dist.codename}/${dist.architecture}/`;
