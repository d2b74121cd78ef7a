// --workers N: N server processes (node:cluster) that share the port and the database file. The
// primary serves nothing itself: it starts the workers, says once where they listen, replaces
// one that dies, relays a stop, and on SIGHUP replaces them all, one at a time, with new processes
// of the program file as it is on disk now (each fork runs the file again): an upgrade with no
// moment when no worker listens. Every worker reads and writes the same SQLite file, and nothing
// is cached between requests, so a write through one is seen by the others at once.
import cluster, { type Worker } from 'node:cluster';
import { once } from 'node:events';
import type { Logger } from '../ops/log.ts';
import type { ListenAddress } from '../serve.ts';
import type { Dealer } from './deal.ts';
import { countForWorkers } from './primary-limits.ts';
import { toPrimary } from './channel.ts';

/** A new worker of a reload that has not listened by then counts as failed; the old one keeps serving. */
const RELOAD_START_TIMEOUT_MS = 60_000;

export const isWorker = (): boolean => cluster.isWorker;

/** "the 2 workers", or "the 1 worker" (a reload may find only one serving). */
const theWorkers = (n: number): string => `the ${n} ${n === 1 ? 'worker' : 'workers'}`;

/** Ends this process by `signal`'s own action, as if no handler had been installed. */
export function endBySignal(signal: NodeJS.Signals): void {
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
}

/** What a worker sends its primary once it listens. */
interface ListeningMessage {
  mcauthListening: ListenAddress;
}

const isListeningMessage = (m: unknown): m is ListeningMessage => typeof m === 'object' && m !== null && 'mcauthListening' in m;

/** In a worker: tells the primary where it listens (the cluster's own event does not know the address of an inherited socket). */
export function tellPrimaryListening(at: ListenAddress): void {
  const message: ListeningMessage = { mcauthListening: at };
  // A primary that has gone (stopped during the start) cannot be told; node:cluster ends this
  // worker when its channel closes.
  toPrimary(message);
}

type Started = { worker: Worker; at: ListenAddress } | { reason: string };

/**
 * Starts `count` workers (each runs this program again, with the same arguments) and resolves
 * to where they listen once all do; rejects when one fails before that (the caller then ends the
 * process: the cluster's handles would keep it alive). `dealer`: on systemd's socket, what deals
 * its connections to the workers (src/cli/deal.ts), which then listen on nothing themselves.
 */
export function startWorkers(count: number, log: Logger, dealer?: Dealer): Promise<ListenAddress> {
  const countLimits = countForWorkers();
  let phase: 'starting' | 'running' | 'stopping' | 'failed' = 'starting';
  /** Workers that listen and have not been told to stop. */
  const serving = new Set<Worker>();
  let reloading = false;
  let reloadQueued = false;
  const pids = (workers: Iterable<Worker>): string => [...workers].map((w) => w.process.pid).join(', ');

  /** Forks a worker; resolves once it listens, or with the reason it did not (it ended, or took longer than `ms`). */
  const startOne = (ms?: number): Promise<Started> => {
    const worker = cluster.fork();
    worker.on('message', (m: unknown) => {
      countLimits(worker, m);
      dealer?.onMessage(worker, m);
    });
    // Once every message it sent has been read: what it did not take goes to another.
    worker.once('disconnect', () => dealer?.remove(worker));
    return new Promise((done) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (result: Started): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('exit', onExit);
        done(result);
      };
      const onMessage = (m: unknown): void => {
        if (!isListeningMessage(m)) return;
        serving.add(worker);
        finish({ worker, at: m.mcauthListening });
      };
      const onExit = (code: number | null, signal: string | null): void => finish({ reason: `worker ${worker.process.pid} ended: ${signal ?? `exit ${code}`}` });
      worker.on('message', onMessage);
      worker.once('exit', onExit);
      if (ms !== undefined) {
        timer = setTimeout(() => {
          worker.process.kill('SIGKILL');
          finish({ reason: `worker ${worker.process.pid} did not listen within ${ms / 1000} s` });
        }, ms);
      }
    });
  };

  const stop = (signal: NodeJS.Signals): void => {
    if (phase === 'stopping') {
      // A second signal: end every worker at once, then this process by the signal's own action.
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
      return endBySignal(signal);
    }
    phase = 'stopping';
    // Accepting no more first: what comes meanwhile waits in the kernel's queue for the next process.
    dealer?.close();
    log.info(`mcauth stopping on ${signal}: each of the ${count} workers finishes its requests in flight`);
    // A worker ignores the same signal sent again (by a terminal or systemd to the whole group).
    for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);

  /** Stops a worker that serves one too many (a crash and a reload replaced the same one). */
  const retire = (worker: Worker): void => {
    serving.delete(worker);
    worker.process.kill('SIGTERM');
  };

  /** Replaces the serving workers one at a time: a new one listens before its old one is told to stop. */
  const replaceAll = async (): Promise<void> => {
    const old = [...serving];
    log.info(`mcauth reloading on SIGHUP: replacing ${theWorkers(old.length)} one at a time with new processes of ${process.argv[1]}`);
    for (const [i, worker] of old.entries()) {
      // One that ended meanwhile was replaced by a new process already.
      if (!serving.has(worker)) continue;
      const started = await startOne(RELOAD_START_TIMEOUT_MS);
      if (phase !== 'running') return;
      if ('reason' in started) {
        log.error(`mcauth reload stopped: a new worker could not start (${started.reason}; see its message above); ${theWorkers(serving.size)} serving (${pids(serving)}) ${serving.size === 1 ? 'keeps' : 'keep'} serving`);
        return;
      }
      if (!serving.has(worker)) {
        // The old one ended while this one started, and another took its place: this one is one too many.
        retire(started.worker);
        continue;
      }
      serving.delete(worker);
      dealer?.place(started.worker, worker);
      // Its graceful stop: it stops taking connections (from the cluster, or asks the dealer for
      // no more) and finishes those it has.
      worker.process.kill('SIGTERM');
      log.info(`mcauth reload: worker ${worker.process.pid} replaced by ${started.worker.process.pid} (${i + 1} of ${old.length}); the old one finishes its requests in flight`);
    }
    log.info(`mcauth reloaded: ${theWorkers(serving.size)} serving (${pids(serving)}) started after the SIGHUP`);
  };

  process.on('SIGHUP', () => {
    if (phase !== 'running') return log.info(`mcauth ignores SIGHUP while ${phase === 'starting' ? 'starting' : 'stopping'}`);
    if (reloading) {
      // Queued, not ignored: the file may have changed again since this reload began, and workers it already replaced run the older one.
      if (!reloadQueued) log.info('mcauth reload on SIGHUP queued: another reload follows the one under way');
      reloadQueued = true;
      return;
    }
    reloading = true;
    void (async () => {
      do {
        reloadQueued = false;
        await replaceAll();
      } while (reloadQueued && phase === 'running');
      reloading = false;
    })();
  });

  cluster.on('exit', (worker, code, signal) => {
    const wasServing = serving.delete(worker);
    if (phase === 'stopping') {
      // Not cluster.workers' count: it lists a worker until it has both exited and disconnected,
      // and the disconnect may come after this event; the last one would then never end this.
      if (Object.values(cluster.workers ?? {}).every((w) => w?.isDead() !== false)) {
        log.info('mcauth stopped: every worker has finished and closed the database');
        process.exit(0);
      }
      return;
    }
    // One that never listened is reported by whoever started it; one a reload retired was expected to end.
    if (!wasServing || phase !== 'running') return;
    log.error(`mcauth worker ${worker.process.pid} ended (${signal ?? `exit ${code}`}); starting another`);
    void startOne().then((started) => {
      if (!('reason' in started)) {
        // No place left (a reload's new worker took it meanwhile): one too many.
        if (dealer && !dealer.place(started.worker)) retire(started.worker);
        return;
      }
      if (phase !== 'running') return;
      log.error(`mcauth could not start a worker in place of ${worker.process.pid} (${started.reason}); ${serving.size} serve`);
      if (serving.size === 0 && !reloading) {
        // Nothing listens: better a failed service, which its manager restarts, than a silent one.
        log.error('mcauth has no worker left; exiting with status 1');
        process.exit(1);
      }
    });
  });

  return new Promise((ready, fail) => {
    /** Ends the start: every worker is killed, then it fails with `reason`. */
    const abandon = (reason: string): void => {
      phase = 'failed';
      const left = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
      for (const w of left) w.process.kill('SIGKILL');
      // Said once they have ended: the caller may remove the database file they would open.
      void Promise.all(left.map((w) => once(w, 'exit'))).then(() => fail(new Error(reason)));
    };
    const running = (at: ListenAddress): void => {
      // A stop that came meanwhile found nothing listening yet.
      if (phase === 'stopping') return dealer?.close();
      if (phase !== 'starting') return;
      phase = 'running';
      ready(at);
    };
    let waiting = count;
    for (let i = 0; i < count; i++) {
      void startOne().then((started) => {
        if (phase !== 'starting') return;
        // It never served: its reason is on standard error. Starting another would fail the same way.
        if ('reason' in started) return abandon(`a worker could not start (${started.reason}); see its message above`);
        dealer?.place(started.worker);
        if (--waiting > 0) return;
        // On systemd's socket, accepting only now: what came before waits in the kernel's queue.
        if (!dealer) return running(started.at);
        dealer.listen().then(running, (err: Error) => abandon(err.message));
      });
    }
  });
}
