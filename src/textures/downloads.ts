// GET/HEAD {base}/textures/{hash}: hosted skins and capes, open to every game client and
// cached for good (a hash names one image forever).
import type { IncomingMessage } from 'node:http';
import type { Area } from '../http/app.ts';
import { HttpError } from '../http/envelope.ts';
import type { Handler } from '../http/router.ts';
import type { Service } from '../service/service.ts';

const HASH = /^[0-9a-f]{64}$/;

/** True when If-None-Match names this ETag (or is "*"); weak forms count (RFC 9110, 13.1.2). */
function notModified(req: IncomingMessage, etag: string): boolean {
  const header = req.headers['if-none-match'];
  if (header === undefined) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t.replace(/^W\//, '') === etag;
  });
}

/** The downloads as an area of the app: `/textures/`, open to all, since game clients cannot send the API key. */
export function textureArea(service: Service): Area {
  const serve: Handler = async (req, res, { hash }) => {
    const png = HASH.test(hash!) ? await service.findTexture(hash!) : undefined;
    if (!png) throw new HttpError(404, 'Unknown texture');
    // nosniff: a player's upload is served as image/png only, never guessed as HTML or script.
    const headers = { etag: `"${hash}"`, 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' };
    if (notModified(req, headers.etag)) {
      res.writeHead(304, headers).end();
      return;
    }
    res.writeHead(200, { ...headers, 'content-type': 'image/png', 'content-length': png.length });
    res.end(req.method === 'HEAD' ? undefined : png);
  };
  return { prefix: '/textures/', routes: { '/textures/:hash': { GET: serve, HEAD: serve } }, admit: () => {} };
}
