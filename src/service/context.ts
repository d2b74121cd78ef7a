// What every service operation works with: the store, the settings, and the clock.
import type { HashPool } from '../crypto/hash-pool.ts';
import type { Store } from '../store/store.ts';

export type Variant = 'base' | 'extended';

export interface ServiceOptions {
  variant: Variant;
  hashConcurrency: number;
  hashQueue: number;
  /** The public address of hosted textures, up to the hash: {--public-url}{base}/textures/; none without --public-url. */
  hostedBase: string | undefined;
  /** Accept whole multiples of the game's texture sizes. */
  hdTextures: boolean;
  joinTtlSeconds: number;
  tokenTtlSeconds: number;
  maxProfiles: number;
  /** Shortest new password, in code points (existing shorter ones still log in). */
  minPasswordLength: number;
  /** External texture URLs may be plain http://. */
  allowHttpTextures: boolean;
  /** How long a password-reset code stays valid (--reset-ttl). */
  resetTtlSeconds: number;
}

export interface Context {
  store: Store;
  options: ServiceOptions;
  /** Every password hash runs through it. */
  pool: HashPool;
  /** Milliseconds since the epoch; every expiry is decided against stored timestamps with it. */
  now: () => number;
}
