// A skin or cape sent as a PNG body (PUT, in the admin API and on the account page): what the
// request says, read within the upload limit; the service then checks the image itself.
import type { IncomingMessage } from 'node:http';
import { readBody } from '../http/body.ts';
import { HttpError } from '../http/envelope.ts';
import { knownQuery } from '../areas/requests.ts';
import { MAX_TEXTURE_BYTES } from './limits.ts';
import type { HostedUpload } from './hosted.ts';
import type { TextureKind } from './rules.ts';

const PNG_TYPE = /^image\/png\s*$/i;

/** What the server's settings say of uploads: whether hosted textures have a public address (--public-url), and --hd-textures. */
export interface UploadSettings {
  hostsTextures: boolean;
  hdTextures: boolean;
}

/** The upload of `kind` in `req`, with `?model=slim|classic` for a skin; refused (409) when hosted textures have no public address. */
export async function readUpload(req: IncomingMessage, kind: TextureKind, { hostsTextures, hdTextures }: UploadSettings): Promise<HostedUpload> {
  const type = req.headers['content-type'];
  if (type !== undefined && !PNG_TYPE.test(type)) throw new HttpError(415, 'Content-Type must be image/png');
  if (!hostsTextures) throw new HttpError(409, 'Hosted textures need the server to run with --public-url');
  const model = knownQuery(req, ['model']).get('model');
  if (model !== null && model !== 'slim' && model !== 'classic') throw new HttpError(400, 'model must be slim or classic');
  if (kind === 'cape' && model !== null) throw new HttpError(400, 'a cape has no model');
  const bytes = await readBody(req, MAX_TEXTURE_BYTES);
  return { kind, bytes, hd: hdTextures, ...(model === null ? {} : { isAlex: model === 'slim' }) };
}
