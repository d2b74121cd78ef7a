// The Yggdrasil API's signing key: RSA, 4096 bits. It signs the profile properties game servers
// verify (SHA1withRSA, as authlib-injector asks) and the chat keys of players' certificates.
// Made at the first start and kept in the store (Service.keepSecret), so every worker and node
// signs with one key and a restart keeps it; or taken from a PEM file (--yggdrasil-key).
// Taken from the namespaces: dist/server.js must link on Node 18 to reach its version check.
import * as nodeCrypto from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import * as fs from 'node:fs';
import type { Service } from '../service/service.ts';

/** The store's name for the key. */
const KEY_NAME = 'yggdrasil-signing-key';
/** authlib-injector's test suite, and Mojang's own key, ask for at least this. */
const KEY_BITS = 4096;

export interface SigningKey {
  /** The public key as `signaturePublickey` gives it: PEM (SPKI). */
  publicPem: string;
  /** The public key's DER (SPKI), base64, as `/minecraftservices/publickeys` gives it. */
  publicDer: string;
  /** SHA1withRSA over `data`, base64. */
  sign: (data: string | Buffer) => string;
}

function signingKey(privateKey: KeyObject): SigningKey {
  if (privateKey.asymmetricKeyType !== 'rsa') throw new Error('the Yggdrasil signing key must be an RSA key');
  const publicKey = nodeCrypto.createPublicKey(privateKey);
  return {
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    publicDer: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
    sign: (data) => nodeCrypto.sign('sha1', typeof data === 'string' ? Buffer.from(data) : data, privateKey).toString('base64'),
  };
}

/** A new key, PKCS#8 PEM; made on libuv's pool, so the event loop keeps serving meanwhile. */
async function makeKey(): Promise<string> {
  const privateKey = await new Promise<KeyObject>((made, fail) =>
    nodeCrypto.generateKeyPair('rsa', { modulusLength: KEY_BITS }, (err, _public, key) => (err ? fail(err) : made(key))),
  );
  return privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

/**
 * The key to sign with: the file's, when one is given (every node must then be given the same);
 * else the store's, made and stored first when there is none (of several processes starting at
 * once, the first to store wins and the others take its key).
 */
export async function loadSigningKey(service: Service, file: string): Promise<SigningKey> {
  if (file !== '') {
    const pem = await fs.promises.readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new Error(`cannot read --yggdrasil-key ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
    });
    try {
      return signingKey(nodeCrypto.createPrivateKey(pem));
    } catch (err) {
      // The message of a parse error never quotes the key.
      throw new Error(`--yggdrasil-key ${file} holds no RSA private key in PEM: ${(err as Error).message}`);
    }
  }
  const kept = (await service.keepSecret(KEY_NAME)) ?? (await service.keepSecret(KEY_NAME, await makeKey()));
  return signingKey(nodeCrypto.createPrivateKey(kept!));
}
