// multipart/form-data, as the Yggdrasil API's texture upload sends it (a `model` field and a
// `file`): only what that needs. A body is read whole, within its limit, and split at its
// boundary; anything else it could hold (nested parts, encodings) is not needed and refused.
import { HttpError } from '../http/envelope.ts';

/** Most fields a form here may hold: the upload has two. */
const MAX_FIELDS = 8;

const malformed = (what: string): HttpError => new HttpError(400, `Malformed multipart/form-data: ${what}`);

/** The boundary a Content-Type names, or a 400 when it is no multipart/form-data with one. */
function boundaryOf(contentType: string | undefined): string {
  const found = /^multipart\/form-data\s*;(?:.*;)?\s*boundary=(?:"([^"]{1,70})"|([^";\s]{1,70}))/i.exec(contentType ?? '');
  if (!found) throw new HttpError(400, 'Content-Type must be multipart/form-data with a boundary');
  return found[1] ?? found[2]!;
}

/** The fields of a form `body`, by name, each once. */
export function formFields(body: Buffer, contentType: string | undefined): Map<string, Buffer> {
  const between = Buffer.from(`\r\n--${boundaryOf(contentType)}`);
  const fields = new Map<string, Buffer>();
  // A line end first, so that the first delimiter is found alike whether it opens the body or follows a preamble.
  const text = Buffer.concat([between.subarray(0, 2), body]);
  let at = text.indexOf(between);
  if (at === -1) throw malformed('no boundary');
  at += between.length;
  for (;;) {
    const after = text.toString('latin1', at, at + 2);
    if (after === '--') return fields;
    if (after !== '\r\n') throw malformed('a boundary not followed by a line end');
    const headersEnd = text.indexOf('\r\n\r\n', at);
    const end = headersEnd === -1 ? -1 : text.indexOf(between, headersEnd + 4);
    if (end === -1) throw malformed('a field without its end');
    const headers = text.toString('latin1', at + 2, headersEnd);
    const name = /^content-disposition:\s*form-data\s*;(?:[^\r\n]*;)?\s*name="([^"\r\n]*)"/im.exec(headers)?.[1];
    if (name === undefined) throw malformed('a field without a name');
    if (fields.has(name)) throw malformed(`the field "${name.slice(0, 32)}" twice`);
    if (fields.size >= MAX_FIELDS) throw malformed(`more than ${MAX_FIELDS} fields`);
    fields.set(name, text.subarray(headersEnd + 4, end));
    at = end + between.length;
  }
}
