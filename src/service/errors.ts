// Refusals of the service: what went wrong in words a player or admin can act on, and its kind.
// The HTTP layer maps a kind to a status; the CLI prints the message.

export type Refusal = 'invalid' | 'unauthorized' | 'not_found' | 'conflict' | 'throttled' | 'busy';

export class ServiceError extends Error {
  readonly kind: Refusal;
  /** Seconds after which trying again makes sense (throttled, busy). */
  readonly retryAfter: number | undefined;

  constructor(kind: Refusal, message: string, retryAfter?: number) {
    super(message);
    this.kind = kind;
    this.retryAfter = retryAfter;
    this.name = 'ServiceError';
  }
}

export const invalid = (message: string): ServiceError => new ServiceError('invalid', message);
export const notFound = (message: string): ServiceError => new ServiceError('not_found', message);
export const busy = (): ServiceError => new ServiceError('busy', 'The server is busy; try again in a moment', 1);
