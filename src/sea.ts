// The program as a single executable application (`npm run release`'s mcauth-<version>-linux-x64:
// a Node binary with the bundle inside, see deploy/release.ts). Three things differ there from
// `node server.js`: the bundle's own `import` and `require` reach only the built-in modules (the
// PostgreSQL driver is loaded from the executable's folder instead), there is no file of the
// bundle for a worker thread to start (the executable carries it as an asset), and a cluster
// worker is handed one argument more. Deno has no node:sea, so it is asked for at run time.
import cluster from 'node:cluster';
import { dirname, resolve } from 'node:path';

type Sea = typeof import('node:sea');

/** node:sea where the runtime has it (Node 20.12 and later; not Deno). */
function seaModule(): Sea | undefined {
  try {
    return process.getBuiltinModule?.('node:sea') as Sea | undefined;
  } catch {
    return undefined;
  }
}

/** Whether this process is the single executable application. */
export const isSea = (): boolean => seaModule()?.isSea() === true;

/** The executable's asset that holds the bundle itself (deploy/release.ts puts it there). */
export const BUNDLE_ASSET = 'server.js';

/** In the executable, the bundle as a module a worker thread can start (a data: URL); elsewhere undefined. */
export function bundleUrl(): URL | undefined {
  const sea = seaModule();
  if (sea?.isSea() !== true) return undefined;
  const text = Buffer.from(sea.getRawAsset(BUNDLE_ASSET) as ArrayBuffer);
  return new URL(`data:text/javascript;base64,${text.toString('base64')}`);
}

/** The executable's folder, where an owner puts what it loads from files (node_modules/postgres). */
export const executableDir = (): string => dirname(process.execPath);

/**
 * A require that resolves as a file in the executable's folder would: from node_modules/ beside
 * it. (node:module is asked for here, where only the executable's Node 26 comes, and not imported:
 * the bundle imports by name only what Node 18 has, to say there which Node it needs.)
 */
export function requireBesideExecutable(): NodeJS.Require {
  const { createRequire } = process.getBuiltinModule('node:module');
  return createRequire(resolve(executableDir(), 'mcauth.cjs'));
}

/**
 * The program's arguments. A cluster worker is forked as `execPath argv[1] ARGS` (the script
 * node would run); the executable runs its own script and keeps that path as an argument before
 * ARGS, so in a worker of the executable the arguments start one later.
 */
export function programArgs(argv: readonly string[] = process.argv, sea = isSea(), worker = cluster.isWorker): string[] {
  return argv.slice(sea && worker ? 3 : 2);
}
