/** Who asked for a change, as the audit trail records it. */
export interface Actor {
  username: string;
  ip: string | null;
}
