/**
 * Rich (boolean) dependencies, rpm >= 4.13: `(foo >= 1.0 or bar)`, `(a if b else c)`, ...
 * A bounded recursive-descent parser; anything it cannot read yields null and the caller
 * treats the whole string as a plain name.
 */
import { Sense } from './tags.js';

/** Boolean operators of rich dependencies. */
export type RichOp = 'and' | 'or' | 'if' | 'unless' | 'with' | 'without';

/** A parsed rich dependency: a plain versioned name, or an operator over parts. */
export type RichDep =
  | { op: 'simple'; name: string; flags: number; evr: string }
  /** For if/unless: args[0] is required when args[1] holds (else args[2], when present). */
  | { op: RichOp; args: RichDep[] };

const MAX_DEPTH = 32;
const MAX_LENGTH = 65_536;
const OPERATORS: Record<string, number> = {
  '<': Sense.LESS,
  '>': Sense.GREATER,
  '=': Sense.EQUAL,
  '==': Sense.EQUAL,
  '<=': Sense.LESS | Sense.EQUAL,
  '=<': Sense.LESS | Sense.EQUAL,
  '>=': Sense.GREATER | Sense.EQUAL,
  '=>': Sense.GREATER | Sense.EQUAL,
};
const KEYWORDS = new Set(['and', 'or', 'if', 'unless', 'else', 'with', 'without']);

class ParseError extends Error {}

class Parser {
  private pos = 0;
  constructor(private readonly s: string) {}

  private skipSpace(): void {
    while (this.pos < this.s.length && /\s/.test(this.s[this.pos]!)) this.pos++;
  }

  /** A bare word: up to whitespace, or an unbalanced ')' that closes the enclosing group. */
  private word(): string {
    const start = this.pos;
    let depth = 0;
    while (this.pos < this.s.length) {
      const c = this.s[this.pos]!;
      if (/\s/.test(c)) break;
      if (c === '(') depth++;
      if (c === ')') {
        if (depth === 0) break;
        depth--;
      }
      this.pos++;
    }
    if (this.pos === start) throw new ParseError('empty word');
    return this.s.slice(start, this.pos);
  }

  private peekWord(): string {
    const save = this.pos;
    try {
      return this.word();
    } catch {
      return '';
    } finally {
      this.pos = save;
    }
  }

  parseGroup(depth: number): RichDep {
    if (depth > MAX_DEPTH) throw new ParseError('too deep');
    this.skipSpace();
    if (this.s[this.pos] !== '(') throw new ParseError('expected (');
    this.pos++;
    const first = this.term(depth);
    this.skipSpace();
    if (this.s[this.pos] === ')') {
      this.pos++;
      return first;
    }
    const op = this.word();
    if (!KEYWORDS.has(op) || op === 'else') throw new ParseError(`unknown operator ${op}`);
    const args: RichDep[] = [first, this.term(depth)];
    for (;;) {
      this.skipSpace();
      if (this.s[this.pos] === ')') {
        this.pos++;
        break;
      }
      const next = this.word();
      if ((op === 'and' || op === 'or' || op === 'with') && next === op) {
        args.push(this.term(depth));
      } else if ((op === 'if' || op === 'unless') && next === 'else' && args.length === 2) {
        args.push(this.term(depth));
      } else {
        throw new ParseError(`unexpected ${next} after ${op}`);
      }
    }
    return { op: op as RichOp, args };
  }

  private term(depth: number): RichDep {
    this.skipSpace();
    if (this.s[this.pos] === '(') return this.parseGroup(depth + 1);
    const name = this.word();
    if (KEYWORDS.has(name)) throw new ParseError(`operator ${name} where a name was expected`);
    this.skipSpace();
    const maybeOp = this.peekWord();
    const flags = OPERATORS[maybeOp];
    if (flags === undefined) return { op: 'simple', name, flags: 0, evr: '' };
    this.word();
    this.skipSpace();
    return { op: 'simple', name, flags, evr: this.word() };
  }

  finish(): void {
    this.skipSpace();
    if (this.pos !== this.s.length) throw new ParseError('trailing text');
  }
}

/** Parses a rich dependency string starting with '('; null when it is not one or is malformed. */
export function parseRichDependency(text: string): RichDep | null {
  if (!text.startsWith('(') || text.length > MAX_LENGTH) return null;
  try {
    const parser = new Parser(text);
    const dep = parser.parseGroup(0);
    parser.finish();
    return dep;
  } catch (e) {
    if (e instanceof ParseError) return null;
    throw e;
  }
}
