// --workers N: N server processes (node:cluster) that share the port and the database file. The
// primary serves nothing itself: it starts the workers, says once where they listen, replaces
// one that dies, and relays a stop. Every worker reads and writes the same SQLite file, and
// nothing is cached between requests, so a write through one is seen by the others at once.
import cluster, { type Worker } from 'node:cluster';
import type { Logger } from '../ops/log.ts';

export const isWorker = (): boolean => cluster.isWorker;

/** Ends this process by `signal`'s own action, as if no handler had been installed. */
export function endBySignal(signal: NodeJS.Signals): void {
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}

/**
 * Starts `count` workers (each runs this program again, with the same arguments) and resolves
 * to the port they listen on once all do; rejects when one fails before that (the caller then
 * ends the process: the cluster's handles would keep it alive).
 */
export function startWorkers(count: number, log: Logger): Promise<number> {
  let listening = 0;
  let stopping = false;
  const fork = (): Worker => cluster.fork();
  for (let i = 0; i < count; i++) fork();

  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) {
      // A second signal: end every worker at once, then this process by the signal's own action.
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
      return endBySignal(signal);
    }
    stopping = true;
    log.info(`mcauth stopping on ${signal}: each of the ${count} workers finishes its requests in flight`);
    // A worker ignores the same signal sent again (by a terminal or systemd to the whole group).
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  return new Promise((ready, fail) => {
    cluster.on('listening', (_worker, address) => {
      if (++listening === count) ready(address.port);
    });
    cluster.on('exit', (worker, code, signal) => {
      const left = Object.keys(cluster.workers ?? {}).length;
      if (stopping) {
        if (left === 0) {
          log.info('mcauth stopped: every worker has finished and closed the database');
          process.exit(0);
        }
      } else if (listening < count) {
        // It never served: its reason is on standard error. Starting another would fail the same way.
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
        fail(new Error(`a worker could not start (exit ${signal ?? code}); see its message above`));
      } else {
        log.error(`mcauth worker ${worker.process.pid} ended (${signal ?? `exit ${code}`}); starting another`);
        fork();
      }
    });
  });
}
