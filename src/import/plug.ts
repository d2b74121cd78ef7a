// The importer's part in a login: the service checks an imported player's password through this,
// until the first successful login replaces the foreign hash with scrypt (src/service/auth.ts).
import type { ForeignHashes } from '../service/context.ts';
import { ServiceError } from '../service/errors.ts';
import { UnsupportedHashError } from './hashes/errors.ts';
import { recognizeHash, verifyForeignHash } from './hashes/formats.ts';
import { startHashWorkers, type HashWorkers } from './hashes/worker.ts';

/**
 * `maxWorkers`: threads for the formats written in JavaScript (bcrypt, phpass), started only
 * when such a hash is first checked. The service's hash pool bounds how many checks run at once,
 * so give it the pool's concurrency.
 */
export function createForeignHashes(maxWorkers: number): ForeignHashes {
  let workers: HashWorkers | undefined;
  return {
    recognize: (hash) => recognizeHash(hash),
    async verify(password, stored) {
      workers ??= startHashWorkers(maxWorkers);
      try {
        return await verifyForeignHash(password, stored, workers);
      } catch (err) {
        // The player cannot be checked here (an argon2 hash without crypto.argon2): said as it is, never a crash.
        if (err instanceof UnsupportedHashError) throw new ServiceError('busy', `This account's password cannot be checked on this server: ${err.message}`);
        throw err;
      }
    },
  };
}
