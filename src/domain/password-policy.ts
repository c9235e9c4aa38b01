/** Password policy (creation, change, reset): 8+ characters, an uppercase letter, a digit or special character. */
export function passwordProblems(password: string): string[] {
  const problems: string[] = [];
  if (password.length < 8) problems.push('must be at least 8 characters');
  if (password.length > 256) problems.push('must be at most 256 characters');
  if (!/[A-Z]/.test(password)) problems.push('must contain an uppercase letter');
  if (!/[0-9]|[^A-Za-z0-9]/.test(password)) problems.push('must contain a digit or a special character');
  return problems;
}
