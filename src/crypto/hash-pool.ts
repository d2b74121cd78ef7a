// Bounded concurrency for password hashing. scrypt runs on libuv's thread pool, off the event
// loop; this pool caps how many run at once and how many wait, so a flood of logins costs
// bounded memory and is refused at once (503) instead of queueing without end.

export interface HashSlot {
  /** Resolves when this slot may hash. */
  ready: Promise<void>;
  /** Gives the slot back (or leaves the queue); safe to call more than once. */
  release: () => void;
}

export interface HashPool {
  /** A place in the pool, running or waiting; undefined when the queue is full too. */
  reserve: () => HashSlot | undefined;
  readonly running: number;
  readonly waiting: number;
}

export function createHashPool(concurrency: number, queueSize: number): HashPool {
  let running = 0;
  const queue: (() => void)[] = [];

  const slot = (ready: Promise<void>, leaveQueue: () => boolean): HashSlot => {
    let released = false;
    return {
      ready,
      release: () => {
        if (released) return;
        released = true;
        if (leaveQueue()) return; // never ran: nothing to hand on
        const next = queue.shift();
        if (next) next();
        else running--;
      },
    };
  };

  return {
    reserve() {
      if (running < concurrency) {
        running++;
        return slot(Promise.resolve(), () => false);
      }
      if (queue.length >= queueSize) return undefined;
      let start!: () => void;
      const ready = new Promise<void>((resolve) => (start = resolve));
      queue.push(start);
      return slot(ready, () => {
        const at = queue.indexOf(start);
        if (at !== -1) queue.splice(at, 1);
        return at !== -1;
      });
    },
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
  };
}
