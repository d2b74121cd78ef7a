// Hash workers: threads that verify the foreign hashes written in JavaScript (bcrypt, phpass), so
// that a login's hundreds of milliseconds of Blowfish never stop the event loop. The server ships
// as one bundled file that Deno runs too, so a worker starts the very file that holds this code
// (import.meta.url: dist/server.js when bundled, this file under tsx; in the single executable,
// the bundle it carries, see src/sea.ts) with a flag in workerData;
// that file serves jobs instead of running the program (src/server.ts asks isHashWorkerThread).
// The caller (the service's hash pool) bounds how many jobs are under way; this only runs them.
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { verifyBcrypt } from './bcrypt.ts';
import { verifyPhpass } from './phpass.ts';
import { bundleUrl } from '../../sea.ts';

export type WorkerHashKind = 'bcrypt' | 'phpass';

interface Job {
  id: number;
  kind: WorkerHashKind;
  password: string;
  stored: string;
}

type Answer = { id: number; ok: boolean } | { id: number; error: string };

const FLAG = 'mcauthHashWorker';

/** True in a thread started by startHashWorkers. */
export function isHashWorkerThread(): boolean {
  return !isMainThread && (workerData as Record<string, unknown> | null)?.[FLAG] === true;
}

const verifiers: Record<WorkerHashKind, (password: string, stored: string) => boolean> = {
  bcrypt: verifyBcrypt,
  phpass: verifyPhpass,
};

let serving = false;

/** The worker's side: answers each job; does nothing outside a hash worker, or when already serving. */
export function serveHashJobs(): void {
  const port = parentPort;
  if (serving || !isHashWorkerThread() || !port) return;
  serving = true;
  port.on('message', ({ id, kind, password, stored }: Job) => {
    let answer: Answer;
    try {
      answer = { id, ok: verifiers[kind](password, stored) };
    } catch (err) {
      answer = { id, error: err instanceof Error ? err.message : String(err) };
    }
    port.postMessage(answer);
  });
}

export interface HashWorkers {
  /** Verifies in a worker thread; rejects when the hash is refused or the worker stops. */
  run(kind: WorkerHashKind, password: string, stored: string): Promise<boolean>;
  /** Stops every worker; jobs under way or waiting are rejected. */
  close(): Promise<void>;
}

interface Pending {
  job: Job;
  done: (ok: boolean) => void;
  fail: (err: Error) => void;
}

interface Slot {
  worker: Worker;
  current: Pending | undefined;
}

/**
 * At most maxWorkers threads, started when a job finds none idle. An idle worker is unref'd so that
 * it never keeps the process alive; a worker with a job is ref'd until it answers. A worker that
 * dies fails its job with an Error and is replaced by the next job. `entry` is for tests.
 */
export function startHashWorkers(maxWorkers: number, entry: URL = bundleUrl() ?? new URL(import.meta.url)): HashWorkers {
  const slots = new Set<Slot>();
  const queue: Pending[] = [];
  let nextId = 0;
  let closed = false;

  const give = (slot: Slot, pending: Pending): void => {
    slot.current = pending;
    slot.worker.ref();
    slot.worker.postMessage(pending.job);
  };

  const next = (slot: Slot): void => {
    slot.current = undefined;
    const pending = queue.shift();
    if (pending) give(slot, pending);
    else slot.worker.unref();
  };

  const spawn = (): Slot => {
    const slot: Slot = { worker: new Worker(entry, { workerData: { [FLAG]: true } }), current: undefined };
    slots.add(slot);
    slot.worker.on('message', (answer: Answer) => {
      const pending = slot.current;
      if (pending?.job.id !== answer.id) return;
      if ('error' in answer) pending.fail(new Error(`hash worker: ${answer.error}`));
      else pending.done(answer.ok);
      next(slot);
    });
    const stopped = (why: string): void => {
      if (!slots.delete(slot)) return; // 'error' is followed by 'exit'
      slot.current?.fail(new Error(`hash worker stopped before it answered (${why})`));
      const waiting = queue.shift();
      if (waiting) start(waiting);
    };
    slot.worker.on('error', (err) => stopped(err instanceof Error ? err.message : String(err)));
    slot.worker.on('exit', (code) => stopped(`exit code ${code}`));
    return slot;
  };

  function start(pending: Pending): void {
    if (closed) return pending.fail(new Error('hash workers are closed'));
    const idle = [...slots].find((slot) => !slot.current);
    if (idle) return give(idle, pending);
    if (slots.size >= maxWorkers) return void queue.push(pending);
    try {
      give(spawn(), pending);
    } catch (err) {
      pending.fail(err instanceof Error ? err : new Error(String(err)));
    }
  }

  return {
    run: (kind, password, stored) =>
      new Promise((done, fail) => start({ job: { id: nextId++, kind, password, stored }, done, fail })),
    async close() {
      closed = true;
      for (const pending of queue.splice(0)) pending.fail(new Error('hash workers are closed'));
      await Promise.all([...slots].map((slot) => slot.worker.terminate()));
    },
  };
}

// This file is the workers' entry under tsx; bundled, the same line runs from dist/server.js.
if (isHashWorkerThread()) serveHashJobs();
