/** LDAP adapter: directory login, connection test, group → role mapping, RFC 4515/4514 helpers. */
export {
  authenticateLdap,
  CA_BUNDLE_UNREADABLE,
  testLdapConnection,
  type LdapAuthResult,
  type LdapConfig,
  type LdapFailure,
  type LdapOptions,
} from './directory.js';
export { dnEquals, escapeFilterValue, normalizeDn } from './names.js';
export { mapGroupsToRole, type GroupRoleMapping } from './roles.js';
