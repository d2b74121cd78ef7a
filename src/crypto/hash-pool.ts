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

  return {
    reserve() {
      const full = running >= concurrency;
      if (full && queue.length >= queueSize) return undefined;
      let start!: () => void;
      const ready = new Promise<void>((resolve) => (start = resolve));
      if (full) queue.push(start);
      else {
        running++;
        start();
      }
      let released = false;
      return {
        ready,
        release: () => {
          if (released) return;
          released = true;
          const at = queue.indexOf(start);
          if (at !== -1) queue.splice(at, 1); // never ran: nothing to hand on
          else if (queue.length > 0) queue.shift()!(); // its place goes to the first waiting
          else running--;
        },
      };
    },
    get running() {
      return running;
    },
    get waiting() {
      return queue.length;
    },
  };
}
