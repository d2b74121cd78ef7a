// Errors of foreign-hash verification.

/** The stored hash is sound, but this runtime lacks what its format needs (such as crypto.argon2). */
export class UnsupportedHashError extends Error {
  override name = 'UnsupportedHashError';
}
