// Argon2 (RFC 9106) in the PHC string form that PHP's password_hash, libsodium and the reference
// write: "$argon2id$v=19$m=65536,t=3,p=4$salt$hash", base64 without padding. Computed by
// crypto.argon2 (Node 24.7 and later) on libuv's thread pool; a runtime without it keeps the
// hashes, and verifying one fails with UnsupportedHashError rather than a silent false.
import * as nodeCrypto from 'node:crypto';
import { decodeBase64 } from './base64.ts';
import { ABOVE_LIMIT, UnsupportedHashError } from './errors.ts';

export type Argon2Function = typeof nodeCrypto.argon2;
/** Read off the namespace: a named import of a missing export would fail to load on older Node. */
export const runtimeArgon2: Argon2Function | undefined = (nodeCrypto as Partial<typeof nodeCrypto>).argon2;

/** 256 MiB: libsodium's "moderate" level, four times PHP's default; more lets a row ask for gigabytes. */
export const ARGON2_MAX_MEMORY_KIB = 262_144;
/** PHP and libsodium use 2 to 4 passes. */
export const ARGON2_MAX_PASSES = 10;
/**
 * The work of a check grows with memory times passes: 512 MiB-passes take about a second here,
 * which a wrong guess may hold a hash slot for. PHP's default (64 MiB, 4 passes) and libsodium's
 * interactive level fit; its moderate level (256 MiB, 3 passes) does not.
 */
export const ARGON2_MAX_WORK_KIB = 524_288;
/** Lanes; PHP's default is 1, the reference's README 4. */
export const ARGON2_MAX_LANES = 16;
/** RFC 9106 section 3.1: at least 8 bytes of salt and 4 of tag. */
const MIN_SALT_BYTES = 8;
const MIN_TAG_BYTES = 4;
/** Version 0x13, written v=19; crypto.argon2 computes no other. */
const VERSION = 19;
const SHAPE = /^\$(argon2id|argon2i|argon2d)\$(?:v=(\d+)\$)?m=([1-9]\d{0,9}),t=([1-9]\d{0,9}),p=([1-9]\d{0,9})\$([^$]*)\$([^$]*)$/;

export interface Argon2Hash {
  variant: 'argon2id' | 'argon2i' | 'argon2d';
  memory: number;
  passes: number;
  lanes: number;
  salt: Buffer;
  tag: Buffer;
}

export function parseArgon2(stored: string): Argon2Hash | string {
  const match = SHAPE.exec(stored);
  if (!match) return 'argon2 hash is malformed (expected $argon2id$v=19$m=...,t=...,p=...$salt$hash)';
  const [, variant, version = '16', m, t, p, saltText, tagText] = match as unknown as [string, Argon2Hash['variant'], string, string, string, string, string, string];
  if (Number(version) !== VERSION) return `argon2 version ${version} is not supported (only v=${VERSION})`;
  const [memory, passes, lanes] = [m, t, p].map(Number) as [number, number, number];
  if (memory > ARGON2_MAX_MEMORY_KIB) return `argon2 memory ${memory} KiB is ${ABOVE_LIMIT} of ${ARGON2_MAX_MEMORY_KIB}`;
  if (passes > ARGON2_MAX_PASSES) return `argon2 passes ${passes} are ${ABOVE_LIMIT} of ${ARGON2_MAX_PASSES}`;
  if (memory * passes > ARGON2_MAX_WORK_KIB) return `argon2 work of ${memory} KiB times ${passes} passes is ${ABOVE_LIMIT} of ${ARGON2_MAX_WORK_KIB} KiB`;
  if (lanes > ARGON2_MAX_LANES) return `argon2 parallelism ${lanes} is ${ABOVE_LIMIT} of ${ARGON2_MAX_LANES}`;
  if (memory < 8 * lanes) return `argon2 memory must be at least 8 KiB per lane, not ${memory} KiB for ${lanes}`;
  const salt = decodeBase64(saltText, false);
  const tag = decodeBase64(tagText, false);
  if (!salt || !tag) return 'argon2 salt or hash is not base64';
  if (salt.length < MIN_SALT_BYTES || tag.length < MIN_TAG_BYTES) return 'argon2 salt or hash is too short';
  return { variant, memory, passes, lanes, salt, tag };
}

/**
 * True when the password (UTF-8) matches; derived off the event loop, compared in constant time.
 * `argon2` is for tests, which pass null to play a runtime without it.
 */
export async function verifyArgon2(password: string, stored: string, argon2 = runtimeArgon2 ?? null): Promise<boolean> {
  const parsed = parseArgon2(stored);
  if (typeof parsed === 'string') throw new Error(parsed);
  if (!argon2) throw new UnsupportedHashError('argon2 hashes need Node 24.7 or later; this runtime has no crypto.argon2');
  const { variant, memory, passes, lanes, salt, tag } = parsed;
  const parameters = { message: Buffer.from(password, 'utf8'), nonce: salt, parallelism: lanes, tagLength: tag.length, memory, passes };
  const derived = await new Promise<Buffer>((done, fail) => argon2(variant, parameters, (err, key) => (err ? fail(err) : done(key))));
  return nodeCrypto.timingSafeEqual(derived, tag);
}
