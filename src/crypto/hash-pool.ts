// Bounded, fair concurrency for password hashing. scrypt runs on libuv's thread pool, off the
// event loop; this pool caps how many run at once and how many wait, so a flood of logins costs
// bounded memory and is refused at once instead of queueing without end. Fair in two ways: a
// name is checked once at a time (its other logins wait their turn outside the pool, so a flood
// for a few names holds a place each and the queue serves names in turn); and a freed slot goes to
// the caller holding the fewest places (all relays counted as one), the login most likely to be
// real first. When the pool is full, the direct caller holding the most gives a place up to a
// newcomer holding fewer; failing that, the login least likely to be real gives its place up to a
// newcomer more likely to be (a relay's logins are told apart this way alone).

/** Why there is no place: the pool is full, or the caller already holds the largest share of it. */
export type NoPlace = 'busy' | 'share';

/**
 * How likely a login is to be a player's, which a full pool keeps first: 2 for a client that
 * logged in to the name before, 1 for a name without recent failures, 0 for the rest.
 */
export type Standing = 0 | 1 | 2;

export interface HashSlot {
  /** Resolves when this slot may hash: true; else why its place was given up to another. */
  ready: Promise<true | NoPlace>;
  /**
   * Gives the slot back (or leaves the queue); safe to call more than once. `timed`: its time
   * from start to release is a check's, drawn on by recentCheckMs (false for one that hashed nothing).
   */
  release: (timed?: boolean) => void;
}

export interface HashPool {
  /**
   * A place, running or waiting, for `holder` (a direct caller's address; none for a relay, bound
   * by the pool alone), for the check of `name` whose turn it has: a more likely login waiting for
   * that turn lends the place its standing, so it is not held up behind a less likely one.
   */
  reserve: (holder?: string, standing?: Standing, name?: string) => HashSlot | NoPlace;
  /**
   * Resolves when it is this login's turn to check `name` (the login of the highest standing
   * waiting goes first): call the function given when its check is over. Undefined when
   * `nameQueue` logins of the name wait already, none of them of a lower standing; else the
   * newest of the lowest gives its place up, and resolves to undefined.
   */
  turn: (name: string, standing?: Standing) => Promise<(() => void) | undefined> | undefined;
  /** How long one of the recent checks ran, from its start to its release (its queueing not included); none before the first. */
  recentCheckMs: () => number | undefined;
  readonly running: number;
  readonly waiting: number;
}

interface Place {
  holder: string | undefined;
  standing: Standing;
  name: string | undefined;
  start: (ok: true | NoPlace) => void;
  /** When it started running. */
  since: number;
}

/** How many recent check times are kept to draw from. */
const RECENT_CHECKS = 64;

export function createHashPool(concurrency: number, queueSize: number, nameQueue = Infinity): HashPool {
  const running = new Set<Place>();
  const queue: Place[] = [];
  const held = new Map<string, number>();
  /** Each name's logins waiting their turn, while one has it. */
  const turns = new Map<string, { standing: Standing; go: (over: (() => void) | undefined) => void }[]>();
  /** The place of the login whose turn a name is, while it has one. */
  const turnPlaces = new Map<string, Place>();
  const recent: number[] = [];
  const holds = (holder: string | undefined): number => (holder === undefined ? 0 : (held.get(holder) ?? 0));
  /** Places of relays, which count as one caller when a freed slot is served. */
  let relayed = 0;
  const hold = (holder: string | undefined, n: number): void => {
    if (holder === undefined) relayed += n;
    else if (holds(holder) + n === 0) held.delete(holder);
    else held.set(holder, holds(holder) + n);
  };
  /**
   * The waiting place to give up for a newcomer of `holder` and `standing`, and why: the newest of
   * the direct caller holding the most, when that is at least two more than `holder` holds; else
   * the newest of the lowest standing, when lower than the newcomer's, among the callers holding
   * no fewer places than `holder` (so a flooding address cannot take others' places by standing).
   */
  const loser = (holder: string | undefined, standing: Standing): [Place, NoPlace] | undefined => {
    let top: Place | undefined;
    let low: Place | undefined;
    for (const place of queue) {
      if (place.holder !== undefined && holds(place.holder) >= holds(top?.holder)) {
        top = place;
      }
      if (holds(place.holder) >= holds(holder) && place.standing <= (low?.standing ?? 2)) {
        low = place;
      }
    }
    if (top && holds(top.holder) >= holds(holder) + 2) return [top, 'share'];
    return low && low.standing < standing ? [low, 'busy'] : undefined;
  };
  const full = (): boolean => running.size >= concurrency && queue.length >= queueSize;
  /** How far back a waiting place is served: the caller holding the fewest (all relays as one) first, the higher standing first among them. */
  const weight = (place: Place): number => (place.holder === undefined ? relayed : holds(place.holder)) * 3 - place.standing;
  /**
   * The first waiting place of a known launcher (standing 2, its own or lent to the login holding
   * a name's turn), else of the least weight: a flood does not make others wait behind its queue.
   */
  const next = (): Place => {
    let at = 0;
    for (let i = 1; i < queue.length; i++) {
      const place = queue[i]!;
      const best = queue[at]!;
      if (place.standing === 2 && best.standing !== 2) at = i;
      else if ((place.standing === 2) === (best.standing === 2) && weight(place) < weight(best)) at = i;
    }
    return queue.splice(at, 1)[0]!;
  };
  const run = (place: Place): void => {
    running.add(place);
    place.since = performance.now();
    place.start(true);
  };
  const leave = (place: Place, timed = true): void => {
    const at = queue.indexOf(place);
    const ran = at === -1 && running.delete(place);
    if (at === -1 && !ran) return; // released before
    if (at !== -1) queue.splice(at, 1);
    hold(place.holder, -1);
    if (place.name !== undefined && turnPlaces.get(place.name) === place) turnPlaces.delete(place.name);
    if (!ran) return;
    if (timed) recent.push(performance.now() - place.since);
    if (recent.length > RECENT_CHECKS) recent.shift();
    if (queue.length > 0) run(next());
  };

  return {
    reserve(holder, standing = 1, name) {
      if (full()) {
        const lost = loser(holder, standing);
        if (!lost) return holds(holder) > 0 ? 'share' : 'busy';
        leave(lost[0]);
        lost[0].start(lost[1]);
      }
      const { promise: ready, resolve: start } = Promise.withResolvers<true | NoPlace>();
      const place: Place = { holder, standing, name, start, since: 0 };
      if (name !== undefined) turnPlaces.set(name, place);
      hold(holder, 1);
      if (running.size < concurrency) run(place);
      else queue.push(place);
      return { ready, release: (timed) => leave(place, timed) };
    },
    turn(name, standing = 1) {
      // Hands the turn to the first waiting login of the highest standing.
      const over = (): void => {
        const line = turns.get(name)!;
        let at = -1;
        for (let i = 0; i < line.length; i++) {
          if (line[i]!.standing > (line[at]?.standing ?? -1)) at = i;
        }
        if (at === -1) turns.delete(name);
        else line.splice(at, 1)[0]!.go(over);
      };
      const line = turns.get(name);
      if (!line) {
        turns.set(name, []);
        return Promise.resolve(over);
      }
      if (line.length >= nameQueue) {
        // Full: the newest of the lowest standing gives its place up, if lower than this one's.
        let low = -1;
        for (let i = 0; i < line.length; i++) {
          if (line[i]!.standing <= (line[low]?.standing ?? 2)) low = i;
        }
        if (low === -1 || line[low]!.standing >= standing) return undefined;
        line.splice(low, 1)[0]!.go(undefined);
      }
      const ahead = turnPlaces.get(name);
      if (ahead && ahead.standing < standing) ahead.standing = standing;
      return new Promise((go) => line.push({ standing, go }));
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
