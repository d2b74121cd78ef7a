// Reading and parsing a JSON request body, within a size limit.
import type { IncomingMessage } from 'node:http';
import { MAX_BODY_BYTES } from '../limits.ts';
import { HttpError } from './envelope.ts';
import { jsonShapeProblem } from '../json-shape.ts';

export function tooLarge(limit: number): HttpError {
  return new HttpError(413, `Request body is larger than ${limit} bytes`);
}

/** The client went away (or broke the stream) before the body ended: nothing is done with it. */
const endedEarly = (): HttpError => new HttpError(400, 'Request body ended early');

/** Reads the whole body, refusing (413) as soon as it is known to exceed `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  // A declared length already past the limit is refused unread.
  if (Number(req.headers['content-length']) > limit) return Promise.reject(tooLarge(limit));
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        req.off('data', onData);
        fail(tooLarge(limit));
      } else chunks.push(chunk);
    };
    req.on('data', onData);
    // (Each comes once: no `once` wrapper is needed.)
    req.on('end', () => done(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    // 'close' comes after 'end', or in place of it for a body that broke off. No 'error' listener:
    // node:http emits a request's 'error' only to listeners, so a broken body is only a 'close'.
    req.on('close', () => req.complete || fail(endedEarly()));
  });
}

// fatal: bytes that are not UTF-8 are refused instead of turned into U+FFFD.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** JSON, or nothing said (a missing Content-Type is allowed); a charset, if any, must be UTF-8. */
const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-?8"?\s*)?$/i;

/** Checks the Content-Type (415), then reads (413, past `limit` bytes) and parses (400) a JSON body. */
export function readJson(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<unknown> {
  const type = req.headers['content-type'];
  if (type !== undefined && !JSON_TYPE.test(type)) return Promise.reject(new HttpError(415, 'Content-Type must be application/json'));
  return readBody(req, limit).then(parseJson);
}

/**
 * Parses a body as JSON. An empty body, bytes that are not UTF-8, text that is not JSON, and
 * JSON of a shape no endpoint takes (see json.ts) are a 400.
 */
export function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw new HttpError(400, 'Request body is empty');
  let problem: string | undefined;
  // Bytes that are not UTF-8 and text that is not JSON are refused alike.
  try {
    const text = utf8.decode(body);
    problem = jsonShapeProblem(text);
    if (problem === undefined) return JSON.parse(text);
  } catch {
    throw new HttpError(400, 'Request body is not valid JSON');
  }
  throw new HttpError(400, `Request body ${problem}`);
}
