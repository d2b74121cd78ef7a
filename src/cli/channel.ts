// A worker's side of node:cluster's channel to its primary.

/**
 * Sends `message` to the primary. `then` runs once it is written, with an error when it could not
 * be (the primary has gone; the worker then ends with its channel): given a callback, a failed
 * send is no unhandled 'error' with a stack.
 */
export function toPrimary(message: object, then: (err: Error | null) => void = () => {}): void {
  process.send?.(message, undefined, {}, then);
}
