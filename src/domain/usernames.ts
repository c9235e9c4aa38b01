/**
 * The one spelling of a user name that lookups, uniqueness and the login lockout go by. Directory
 * servers match login names without regard to case, so an account reached as `Alice`, `ALICE` and
 * `alice` must be one account with one failure counter; local names follow the same rule so that
 * `Admin` and `admin` can never be two accounts. Stored names keep the case they were created with.
 */
export function canonicalUsername(name: string): string {
  return name.toLowerCase();
}
