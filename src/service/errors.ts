// Refusals of the service: what went wrong in words a player or admin can act on, and its kind.
// The HTTP layer maps a kind to a status; the CLI prints the message.

export type Refusal = 'invalid' | 'unauthorized' | 'not_found' | 'conflict';

export class ServiceError extends Error {
  readonly kind: Refusal;

  constructor(kind: Refusal, message: string) {
    super(message);
    this.kind = kind;
    this.name = 'ServiceError';
  }
}

export const invalid = (message: string): ServiceError => new ServiceError('invalid', message);
export const notFound = (message: string): ServiceError => new ServiceError('not_found', message);
