// What every service operation works with: the store, the settings, and the clock.
import type { Store } from '../store/store.ts';

export type Variant = 'base' | 'extended';

export interface ServiceOptions {
  variant: Variant;
  joinTtlSeconds: number;
  tokenTtlSeconds: number;
  maxProfiles: number;
}

export interface Context {
  store: Store;
  options: ServiceOptions;
  /** Milliseconds since the epoch; every expiry is decided against stored timestamps with it. */
  now: () => number;
}
