/**
 * The shape the README's Architecture section describes, checked on the sources so that it stays
 * true: which layer may import which, no import cycle, SQL only in the database adapter, files
 * only where the README says.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import ts from 'typescript';

const SRC = resolve(import.meta.dirname, '../src');

interface ModuleImport {
  /** The imported module, relative to src/ (`adapters/db/index.ts`), or the package specifier. */
  target: string;
  local: boolean;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(path) : e.name.endsWith('.ts') ? [path] : [];
  });
}

/** Static imports and re-exports, and `import()` calls, of one module. */
function importsOf(file: string): ModuleImport[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const found: ModuleImport[] = [];
  const add = (specifier: string, typeOnly: boolean) => {
    const local = specifier.startsWith('.');
    found.push({ target: local ? relative(SRC, resolve(dirname(file), specifier)).replace(/\.js$/, '.ts') : specifier, local, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : null;
      const typeOnly = Boolean(clause && (clause.isTypeOnly || (!clause.name && named && named.length > 0 && named.every((e) => e.isTypeOnly))));
      add(node.moduleSpecifier.text, typeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0])) {
      add(node.arguments[0].text, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      add(node.argument.literal.text, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

const modules = new Map(sourceFiles(SRC).map((file) => [relative(SRC, file), importsOf(file)]));
const layerOf = (module: string) => module.split('/')[0]!.replace(/\.ts$/, '');

/** The layers each layer may import: data flows route → service → domain, adapters for I/O. */
const ALLOWED: Record<string, readonly string[]> = {
  domain: ['domain'],
  adapters: ['adapters', 'domain'],
  config: ['domain'],
  services: ['services', 'adapters', 'domain', 'config'],
  http: ['http', 'services', 'adapters', 'domain', 'config'],
  main: ['main', 'http', 'services', 'config', 'domain', 'adapters'],
};

/** The modules of the domain that open the package and feed files they are handed by path. */
const DOMAIN_FILE_READERS = new Set(['domain/deb/ar.ts', 'domain/rpm/reader.ts', 'domain/rpm/payload.ts', 'domain/security/feeds/bytes.ts']);

describe('architecture', () => {
  it('reads every module of src/ (the checks below are not vacuous)', () => {
    assert.ok(modules.size > 250, `${modules.size} modules`);
    for (const layer of Object.keys(ALLOWED)) assert.ok([...modules.keys()].some((m) => layerOf(m) === layer), layer);
    assert.ok([...modules.values()].some((list) => list.some((i) => i.typeOnly)), 'type-only imports are told apart');
  });

  it('imports only from the layers each layer may use, and only modules that exist', () => {
    const wrong: string[] = [];
    for (const [module, list] of modules) {
      for (const i of list.filter((x) => x.local)) {
        if (!modules.has(i.target)) wrong.push(`${module} imports ${i.target}, which is not a module`);
        else if (!ALLOWED[layerOf(module)]!.includes(layerOf(i.target))) wrong.push(`${module} -> ${i.target}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('has no import cycle, type-only imports included', () => {
    // Tarjan's strongly connected components over every local import.
    let next = 0;
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const cycles: string[][] = [];
    const visit = (m: string): void => {
      index.set(m, next);
      low.set(m, next++);
      stack.push(m);
      onStack.add(m);
      for (const { target } of modules.get(m)!.filter((i) => i.local && modules.has(i.target))) {
        if (!index.has(target)) {
          visit(target);
          low.set(m, Math.min(low.get(m)!, low.get(target)!));
        } else if (onStack.has(target)) {
          low.set(m, Math.min(low.get(m)!, index.get(target)!));
        }
      }
      if (low.get(m) !== index.get(m)) return;
      const component: string[] = [];
      let top: string;
      do {
        top = stack.pop()!;
        onStack.delete(top);
        component.push(top);
      } while (top !== m);
      if (component.length > 1) cycles.push(component.sort());
    };
    for (const m of modules.keys()) if (!index.has(m)) visit(m);
    assert.deepEqual(cycles, []);
  });

  it('keeps the domain free of HTTP, SQL and drivers, and files to its package and feed readers', () => {
    const infrastructure = /^(fastify|@fastify\/|kysely|pg|better-sqlite3|ioredis|ldapts|nodemailer|pino|node:(http|https|net|child_process|worker_threads))/;
    const wrong: string[] = [];
    for (const [module, list] of modules) {
      if (layerOf(module) !== 'domain') continue;
      for (const i of list.filter((x) => !x.local)) {
        if (infrastructure.test(i.target) && !i.typeOnly) wrong.push(`${module} imports ${i.target}`);
        if (/^(node:)?fs(\/promises)?$/.test(i.target) && !DOMAIN_FILE_READERS.has(module)) wrong.push(`${module} imports ${i.target}`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('leaves files and outside-world clients to adapters: no node:fs, database, Redis, LDAP or mail library in services or routes', () => {
    const outsideWorld = /^((node:)?fs(\/promises)?|pg|better-sqlite3|ioredis|ldapts|nodemailer)$/;
    const wrong = [...modules]
      .filter(([module]) => ['services', 'http'].includes(layerOf(module)))
      .flatMap(([module, list]) => list.filter((i) => outsideWorld.test(i.target) && !i.typeOnly).map((i) => `${module} imports ${i.target}`));
    assert.deepEqual(wrong, []);
  });

  it('writes SQL only in src/adapters/db', () => {
    const queryBuilder = /\.(selectFrom|insertInto|updateTable|deleteFrom)\(/;
    const sqlOutside = [...modules.keys()].filter((m) => !m.startsWith('adapters/db/') && queryBuilder.test(readFileSync(join(SRC, m), 'utf8')));
    assert.deepEqual(sqlOutside, []);
  });

  it('lets routes take only types from adapters, but for the I/O of the HTTP edge itself', () => {
    const edge = new Set([
      'adapters/storage/hash-stream.ts', // an upload's body streamed into a temp file as it arrives
      'adapters/ui-assets/ui-assets.ts', // the web interface's built files
      'adapters/db/unavailable.ts', // a lost database or a full disk told apart, for 503 and 507
    ]);
    const wrong = [...modules]
      .filter(([module]) => layerOf(module) === 'http')
      .flatMap(([module, list]) => list.filter((i) => i.local && layerOf(i.target) === 'adapters' && !i.typeOnly && !edge.has(i.target)).map((i) => `${module} -> ${i.target}`));
    assert.deepEqual(wrong, []);
  });
});
