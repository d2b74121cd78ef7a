// Errors of foreign-hash verification.

/** What a hash's parameters asking for more work than this service allows are said to be. */
export const ABOVE_LIMIT = "above this service's limit";

/**
 * The stored hash is sound, but this runtime lacks what its format needs (such as crypto.argon2),
 * or it asks for more work than this service now allows (a row imported under a higher limit).
 */
export class UnsupportedHashError extends Error {
  override name = 'UnsupportedHashError';
}
