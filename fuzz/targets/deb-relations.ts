/**
 * Relationship fields: parseRelations and parseProvides, the canonical form of each alternative
 * read back to the same relation, and the import resolver's fast reading (parseRelationsFast),
 * which must give exactly parseRelations' groups whenever it answers.
 */
import { formatRelation, parseProvides, parseRelation, parseRelations, type RelationGroup } from '../../src/domain/deb/relations.js';
import { PackageFormatError } from '../../src/domain/errors.js';
import { parseRelationsFast } from '../../src/domain/imports/resolve-formats.js';
import { expectOnly, invariant, syncTarget } from '../lib/harness.js';

export const fuzz = syncTarget((data) => {
  const field = data.toString('utf8');
  let groups: RelationGroup[] | null = null;
  try {
    groups = parseRelations(field, 'Depends');
  } catch (error) {
    expectOnly(error, PackageFormatError);
  }
  const fast = parseRelationsFast(field);
  if (fast !== null) {
    invariant(groups !== null, () => `fast reading accepts ${JSON.stringify(field)}, parseRelations refuses it`);
    invariant(JSON.stringify(fast) === JSON.stringify(groups), () => `fast reading differs on ${JSON.stringify(field)}`);
  }
  for (const group of groups ?? []) {
    for (const relation of group.alternatives) {
      const canonical = formatRelation(relation);
      const again = parseRelation(canonical);
      invariant(
        again.name === relation.name && again.archQualifier === relation.archQualifier && JSON.stringify(again.constraint) === JSON.stringify(relation.constraint),
        () => `${JSON.stringify(canonical)} reads back differently`,
      );
    }
  }
  try {
    parseProvides(field);
  } catch (error) {
    expectOnly(error, PackageFormatError);
  }
});
