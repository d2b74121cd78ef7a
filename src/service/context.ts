// What every service operation works with: the store, the settings, and the clock.
import type { HashPool } from '../crypto/hash-pool.ts';
import type { Store } from '../store/store.ts';

export type Variant = 'base' | 'extended';

/**
 * Password hashes of other systems, kept for imported players until their first login replaces
 * them with scrypt. Plugged in by the importer (src/import/); without it, only scrypt is known.
 */
export interface ForeignHashes {
  /** The string to store for a hash written by another system, or why it cannot be taken. */
  recognize(hash: string): { stored: string } | { problem: string };
  /** Checks a password against a stored string `recognize` gave, off the event loop, in constant time. */
  verify(password: string, stored: string): Promise<boolean>;
}

export interface ServiceOptions {
  variant: Variant;
  hashConcurrency: number;
  hashQueue: number;
  /** How soon a failed login may be answered at the earliest (FAILED_LOGIN_FLOOR_MS; 0 in tests that count, not time). */
  failedLoginFloorMs: number;
  /** The public address of hosted textures, up to the hash: {--public-url}{base}/textures/; none without --public-url. */
  hostedBase: string | undefined;
  joinTtlSeconds: number;
  tokenTtlSeconds: number;
  maxProfiles: number;
  /** Shortest new password, in code points (existing shorter ones still log in). */
  minPasswordLength: number;
  /** External texture URLs may be plain http://. */
  allowHttpTextures: boolean;
  /** How long a password-reset code stays valid (--reset-ttl). */
  resetTtlSeconds: number;
  foreignHashes?: ForeignHashes;
}

export interface Context {
  store: Store;
  options: ServiceOptions;
  /** Every password hash runs through it. */
  pool: HashPool;
  /** Keyed digests of passwords (with their name) refused under throttle, newest last (see throttle.ts). */
  refusedRetries: Set<string>;
  /** Milliseconds since the epoch; every expiry is decided against stored timestamps with it. */
  now: () => number;
}
