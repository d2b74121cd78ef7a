// The raw scrypt rate: password hashes a second with the service's own function and parameters,
// `concurrency` at once, for `seconds`. The ceiling /auth is measured against.
//
//   node --import tsx bench/scrypt-rate.ts CONCURRENCY SECONDS
import { hashPassword } from '../src/crypto/password.ts';

const concurrency = Number(process.argv[2] ?? 4);
const seconds = Number(process.argv[3] ?? 10);
await hashPassword('warm-up');
let done = 0;
const until = performance.now() + seconds * 1000;
const began = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      await hashPassword('bench-password');
      done++;
    }
  }),
);
process.stdout.write(`${done / ((performance.now() - began) / 1000)}\n`);
