// The service with a test clock and a counted test hash, for the throttle's tests
// (throttle.test.ts, login-floor.test.ts): players here carry a test hash (a "foreign" one) whose
// checks are counted, and can be held, so a test sees exactly which attempts reached a password
// check.
import { defaultServiceOptions } from '../../src/cli/options.ts';
import { createService } from '../../src/service/service.ts';
import type { LoginClient } from '../../src/service/throttle.ts';
import type { ForeignHashes } from '../../src/service/context.ts';
import { createMemoryStore } from '../../src/memory/store.ts';

/** Clients as the HTTP layer makes them: a direct caller by address; a relay's players, all as one. */
export const direct = (address: string): LoginClient => ({ id: address, shared: false, address });
export const RELAY: LoginClient = { id: 'relay 127.0.0.1', shared: true };

export function setup(options = {}) {
  let now = 10_000_000;
  const checks = { count: 0, hold: undefined as Promise<void> | undefined };
  const foreignHashes: ForeignHashes = {
    recognize: (hash) => ({ stored: `test$${hash}` }),
    async verify(password, stored) {
      checks.count++;
      await checks.hold;
      return stored === `test$${password}`;
    },
  };
  // No floor for failed logins: these tests count checks, the floor's own test times it.
  const service = createService(createMemoryStore(), { ...defaultServiceOptions(), failedLoginFloorMs: 0, foreignHashes, ...options }, () => now);
  const addPlayer = (name: string) => service.addUser({ name, hash: 'right-password' });
  return { checks, service, addPlayer, advance: (ms: number) => (now += ms) };
}

/** Resolves once `ready` holds, looking again after each turn of the event loop. */
export async function until(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((r) => setImmediate(r));
}
