/**
 * Quoting for POSIX sh, for commands Tollgate hands to users to paste into a root shell.
 * Words made only of characters sh never interprets stay bare (the commands stay readable);
 * anything else is wrapped in single quotes, inside which sh interprets nothing, and each
 * single quote is written as '\'' (close, escaped quote, reopen).
 */
const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

export function shellQuote(value: string): string {
  if (SAFE_WORD.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
