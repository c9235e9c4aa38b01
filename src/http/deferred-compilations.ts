/**
 * Request validators and response serializers are compiled at a route's first use
 * (validation.ts, lazy-serializers.ts). This keeps, by route, how to compile each, so that a
 * route about to be used can be compiled ahead: GET /import/resolve once the dependency resolver
 * has warmed up, since the first resolution after a start otherwise also paid ~8 ms of CPU for
 * Ajv and fast-json-stringify (measured with a CPU profile of kde-full as a restarted service's
 * first request).
 */
export class DeferredCompilations {
  /** `METHOD url` → the compilations not run yet; each answers whether it compiled now. */
  private readonly byRoute = new Map<string, Array<() => boolean>>();

  add(method: string, url: string, compile: () => boolean): void {
    const key = `${method} ${url}`;
    const list = this.byRoute.get(key);
    if (list) list.push(compile);
    else this.byRoute.set(key, [compile]);
  }

  /**
   * Compiles what a first request to `method path` would, under every API prefix the path is
   * mounted at (`path` as routes declare it, e.g. `/import/resolve/:package_name`). Returns how
   * many validators and serializers were compiled now (not those compiled by a request before).
   */
  compileNow(method: string, path: string): number {
    let compiled = 0;
    for (const [key, compiles] of this.byRoute) {
      if (!key.startsWith(`${method} `) || !key.endsWith(path)) continue;
      for (const compile of compiles) if (compile()) compiled += 1;
      this.byRoute.delete(key);
    }
    return compiled;
  }
}
