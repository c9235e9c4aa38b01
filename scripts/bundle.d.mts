export declare const BUNDLE_PREFIX: string;
/** Bundles tsc's output (`in`: absolute paths) into `outdir` as `<out>.mjs` plus shared chunks; returns the files written, entries first. */
export declare function bundleService(entries: Array<{ in: string; out: string }>, outdir: string): Promise<string[]>;
