// Which runtimes can run the service. Checked before anything else is loaded: node:sqlite
// exists only from Node 22.13 and Deno 2.2, and an older runtime should say so, not crash.

export const MIN_NODE = [22, 13] as const;
export const MIN_DENO = [2, 2] as const;

function below(version: string, min: readonly [number, number]): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major < min[0] || (major === min[0] && minor < min[1]);
}

/** A sentence saying what is needed, or undefined when this runtime will do. */
export function runtimeProblem(versions: Record<string, string | undefined>): string | undefined {
  const { deno, node = '0' } = versions;
  if (deno !== undefined) {
    return below(deno, MIN_DENO) ? `mcauth needs Deno ${MIN_DENO.join('.')} or later; this is Deno ${deno}.` : undefined;
  }
  return below(node, MIN_NODE) ? `mcauth needs Node.js ${MIN_NODE.join('.')} or later; this is Node.js ${node}.` : undefined;
}

/**
 * Errors that need not end the process: a part that knows its own fault (the PostgreSQL
 * driver's, see src/postgres/connect.ts) registers here, recovers, and says what it did; the
 * uncaught-error handler of server.ts asks before it ends the process.
 */
export const recoverable: ((err: Error) => string | undefined)[] = [];
