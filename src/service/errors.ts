// Refusals of the service: what went wrong in words a player or admin can act on, and its kind.
// The HTTP layer maps a kind to a status; the CLI prints the message.

export type Refusal = 'invalid' | 'unauthorized' | 'forbidden' | 'not_found' | 'conflict' | 'throttled' | 'busy';

export class ServiceError extends Error {
  readonly kind: Refusal;
  /** Seconds after which trying again makes sense (throttled, busy). */
  readonly retryAfter: number | undefined;
  /** Which rule that protects the others refused it (throttle, pool_share), for the log's reason and the metrics. */
  readonly rule: string | undefined;

  constructor(kind: Refusal, message: string, retryAfter?: number, rule?: string) {
    super(message);
    this.kind = kind;
    this.retryAfter = retryAfter;
    this.rule = rule;
    this.name = 'ServiceError';
  }
}

/** The rule of a refusal because the database cannot be reached now: counted as an `error` outcome, as any failure of the database is. */
export const DB_UNAVAILABLE = 'db_unavailable';

export const invalid = (message: string): ServiceError => new ServiceError('invalid', message);
export const notFound = (message: string): ServiceError => new ServiceError('not_found', message);
/** No place in the hash pool: it is full ('busy', 503), or this address holds the largest share of it ('share', 429). */
export const noPlace = (why: 'busy' | 'share'): ServiceError =>
  why === 'busy'
    ? new ServiceError('busy', 'The server is busy; try again in a moment', 1, 'pool_busy')
    : new ServiceError('throttled', 'Too many logins from this address are waiting; try again in a moment', 1, 'pool_share');

/** At most this much of any input is quoted back in a message: an error line stays readable, whatever was sent. */
const MAX_QUOTED_CHARS = 64;

/** `text` in double quotes, cut to MAX_QUOTED_CHARS characters (marked with …). */
export function quote(text: string): string {
  const chars = [...text];
  return `"${chars.length > MAX_QUOTED_CHARS ? `${chars.slice(0, MAX_QUOTED_CHARS).join('')}…` : text}"`;
}
