// The response envelope: every answer, success or failure, is JSON of one of two shapes.
import type { ServerResponse } from 'node:http';

/** A failure the HTTP layer decided on itself: a status, a message for the caller, extra headers. */
export class HttpError extends Error {
  readonly status: number;
  readonly headers: Record<string, string>;
  /** Which per-client rule refused it, for the log's reason and auth_refusals_total. */
  readonly refusal?: string;
  /** How long the answer is held back (HELD_REFUSAL_MS for a flood's refusals); 0: at once. */
  readonly heldMs: number;

  constructor(status: number, message: string, headers: Record<string, string> = {}, refusal?: string, heldMs = 0) {
    super(message);
    [this.status, this.headers, this.refusal, this.heldMs] = [status, headers, refusal, heldMs];
    this.name = 'HttpError';
  }
}

/** Answers with `body` as JSON, whatever its shape (an area with an API of its own answers with this). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const json = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
    'cache-control': 'no-store',
    // A browser must not guess another type for a body that echoes what a caller sent.
    'x-content-type-options': 'nosniff',
  });
  res.end(json);
}

export function sendResult(res: ServerResponse, result: unknown): void {
  sendJson(res, 200, { success: true, result });
}

/** The body of a failure answer: the envelope's, or the shape of an area's own API (Area.failure). */
export type FailureBody = (status: number, message: string) => unknown;
const envelopeFailure: FailureBody = (_status, message) => ({ success: false, error: message });

export function sendError(res: ServerResponse, status: number, message: string, headers?: Record<string, string>, body = envelopeFailure): void {
  sendJson(res, status, body(status, message), headers);
}
