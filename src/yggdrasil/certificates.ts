// Player certificates (POST /minecraftservices/player/certificates): the key pair a game of 1.19
// or later signs its chat with, its public key signed by the service's key, so a game server with
// enforce-secure-profile=true behind authlib-injector accepts the chat. The signed payloads are
// the game's own (ProfilePublicKey.Data): v1 over the expiry in milliseconds, as text, followed
// by the public key in the game's PEM; v2 over the player's UUID (16 bytes), the expiry (8 bytes,
// big-endian) and the public key's DER.
import * as nodeCrypto from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { User } from '../store/store.ts';
import type { SigningKey } from './keys.ts';

/** A certificate lasts two days, as Mojang's do; the game asks for a new one after the first. */
const CERTIFICATE_MS = 48 * 60 * 60 * 1000;
const REFRESH_AFTER_MS = 24 * 60 * 60 * 1000;
/** Chat keys are 2048 bits, as Mojang's are. */
const CHAT_KEY_BITS = 2048;
/** Most players whose certificate is remembered; past it, the oldest go first. */
const MAX_KEPT = 10_000;

/** `der` in the PEM form the game writes and reads: base64 in lines of 76, between its own labels. */
const gamePem = (label: string, der: Buffer): string =>
  `-----BEGIN ${label}-----\n${der.toString('base64').replace(/.{76}(?=.)/g, '$&\n')}\n-----END ${label}-----\n`;

export interface Certificate {
  keyPair: { privateKey: string; publicKey: string };
  publicKeySignature: string;
  publicKeySignatureV2: string;
  expiresAt: string;
  refreshedAfter: string;
}

async function makeCertificate(key: SigningKey, user: User, now: number): Promise<Certificate> {
  const pair = await new Promise<{ publicKey: KeyObject; privateKey: KeyObject }>((made, fail) =>
    nodeCrypto.generateKeyPair('rsa', { modulusLength: CHAT_KEY_BITS }, (err, publicKey, privateKey) => (err ? fail(err) : made({ publicKey, privateKey }))),
  );
  const publicDer = pair.publicKey.export({ type: 'spki', format: 'der' });
  const expiresAt = now + CERTIFICATE_MS;
  const expiry = Buffer.alloc(8);
  expiry.writeBigInt64BE(BigInt(expiresAt));
  const uuid = Buffer.from(user.id.replaceAll('-', ''), 'hex');
  return {
    keyPair: {
      privateKey: gamePem('RSA PRIVATE KEY', pair.privateKey.export({ type: 'pkcs8', format: 'der' })),
      publicKey: gamePem('RSA PUBLIC KEY', publicDer),
    },
    publicKeySignature: key.sign(`${expiresAt}${gamePem('RSA PUBLIC KEY', publicDer)}`),
    publicKeySignatureV2: key.sign(Buffer.concat([uuid, expiry, publicDer])),
    expiresAt: new Date(expiresAt).toISOString(),
    refreshedAfter: new Date(now + REFRESH_AFTER_MS).toISOString(),
  };
}

export function createCertificates(key: SigningKey, now = Date.now) {
  /**
   * Each player's certificate until it is due for renewal: a key pair costs tens of milliseconds
   * of CPU, so a token held by a script gets the same one back instead of a new one a call.
   */
  const kept = new Map<string, { made: Promise<Certificate>; until: number }>();
  return {
    /** The keys that verify profile properties and player certificates (GET /minecraftservices/publickeys). */
    publicKeys: { profilePropertyKeys: [{ publicKey: key.publicDer }], playerCertificateKeys: [{ publicKey: key.publicDer }] },
    issue(user: User): Promise<Certificate> {
      const at = now();
      const mine = kept.get(user.id);
      if (mine && at < mine.until) return mine.made;
      const made = makeCertificate(key, user, at);
      kept.delete(user.id);
      if (kept.size >= MAX_KEPT) kept.delete(kept.keys().next().value!);
      kept.set(user.id, { made, until: at + REFRESH_AFTER_MS });
      made.catch(() => kept.delete(user.id));
      return made;
    },
  };
}
