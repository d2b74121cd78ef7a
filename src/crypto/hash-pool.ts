// Bounded, fair concurrency for password hashing. scrypt runs on libuv's thread pool, off the
// event loop; this pool caps how many run at once and how many wait, so a flood of logins costs
// bounded memory and is refused at once instead of queueing without end. Fair in two ways: a
// name is checked once at a time (its other logins wait their turn outside the pool, so a flood
// for a few names holds a place each and the queue serves names in turn); and a freed slot goes to
// the caller holding the fewest places (all relays counted as one), and when the pool is full, the
// direct caller holding the most gives a place up to a newcomer holding fewer.

/** Why there is no place: the pool is full, or the caller already holds the largest share of it. */
export type NoPlace = 'busy' | 'share';

export interface HashSlot {
  /** Resolves when this slot may hash: true; false when its place went to a caller holding fewer. */
  ready: Promise<boolean>;
  /** Gives the slot back (or leaves the queue); safe to call more than once. */
  release: () => void;
}

export interface HashPool {
  /** A place, running or waiting, for `holder` (a direct caller's address; none for a relay, bound by the pool alone). */
  reserve: (holder?: string) => HashSlot | NoPlace;
  /** Why `reserve` would find no place for `holder` now; undefined when it would find one. Takes nothing. */
  refusal: (holder?: string) => NoPlace | undefined;
  /**
   * Resolves when `name` has no check before this one; call the function given when this one is
   * over. Undefined when `nameQueue` logins of the name wait already.
   */
  turn: (name: string) => Promise<() => void> | undefined;
  /** How long one of the recent checks took, from its reservation to its release, queueing included; none before the first. */
  recentCheckMs: () => number | undefined;
  readonly running: number;
  readonly waiting: number;
}

interface Place {
  holder: string | undefined;
  start: (ok: boolean) => void;
  since: number;
}

/** How many recent check times are kept to draw from. */
const RECENT_CHECKS = 64;

export function createHashPool(concurrency: number, queueSize: number, nameQueue = Infinity): HashPool {
  const running = new Set<Place>();
  const queue: Place[] = [];
  const held = new Map<string, number>();
  /** Each name's logins, checking or waiting their turn, and the end of the last one's turn. */
  const turns = new Map<string, { count: number; last: Promise<void> }>();
  const recent: number[] = [];
  const holds = (holder: string | undefined): number => (holder === undefined ? 0 : (held.get(holder) ?? 0));
  /** Places of relays, which count as one caller when a freed slot is served. */
  let relayed = 0;
  const hold = (holder: string | undefined, n: number): void => {
    if (holder === undefined) relayed += n;
    else if (holds(holder) + n === 0) held.delete(holder);
    else held.set(holder, holds(holder) + n);
  };
  /** The newest waiting place of the direct caller holding the most, when that is at least two more than `holder` holds. */
  const loser = (holder: string | undefined): Place | undefined => {
    let top: Place | undefined;
    for (const place of queue) if (place.holder !== undefined && holds(place.holder) >= holds(top?.holder)) top = place;
    return top && holds(top.holder) >= holds(holder) + 2 ? top : undefined;
  };
  const full = (): boolean => running.size >= concurrency && queue.length >= queueSize;
  const refusal = (holder?: string): NoPlace | undefined => {
    if (!full() || loser(holder)) return undefined;
    return holds(holder) > 0 ? 'share' : 'busy';
  };
  /** The first waiting place of the caller holding the fewest (all relays as one): a flood does not make others wait behind its queue. */
  const next = (): Place => {
    const weight = (place: Place): number => (place.holder === undefined ? relayed : holds(place.holder));
    let at = 0;
    for (let i = 1; i < queue.length; i++) if (weight(queue[i]!) < weight(queue[at]!)) at = i;
    return queue.splice(at, 1)[0]!;
  };
  const run = (place: Place): void => {
    running.add(place);
    place.start(true);
  };
  const leave = (place: Place): void => {
    const at = queue.indexOf(place);
    const ran = at === -1 && running.delete(place);
    if (at === -1 && !ran) return; // released before
    if (at !== -1) queue.splice(at, 1);
    hold(place.holder, -1);
    if (!ran) return;
    recent.push(performance.now() - place.since);
    if (recent.length > RECENT_CHECKS) recent.shift();
    if (queue.length > 0) run(next());
  };

  return {
    refusal,
    reserve(holder) {
      const no = refusal(holder);
      if (no) return no;
      if (full()) {
        const lost = loser(holder)!;
        leave(lost);
        lost.start(false);
      }
      const { promise: ready, resolve: start } = Promise.withResolvers<boolean>();
      const place: Place = { holder, start, since: performance.now() };
      hold(holder, 1);
      if (running.size < concurrency) run(place);
      else queue.push(place);
      return { ready, release: () => leave(place) };
    },
    turn(name) {
      const line = turns.get(name) ?? { count: 0, last: Promise.resolve() };
      if (line.count > nameQueue) return undefined;
      const before = line.last;
      const { promise, resolve: over } = Promise.withResolvers<void>();
      line.last = promise;
      line.count++;
      turns.set(name, line);
      return before.then(() => () => {
        if (--line.count === 0) turns.delete(name);
        over();
      });
    },
    recentCheckMs: () => (recent.length === 0 ? undefined : recent[Math.floor(Math.random() * recent.length)]),
    get running() {
      return running.size;
    },
    get waiting() {
      return queue.length;
    },
  };
}
