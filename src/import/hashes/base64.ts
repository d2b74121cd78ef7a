// Strict standard base64, as the formats that use it write it. Buffer.from(text, 'base64') skips
// what it cannot read; a hash with a stray character is damaged and should be refused, not read.

const PADDED = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UNPADDED = /^[A-Za-z0-9+/]*$/;

/** The bytes of `text`, or undefined unless it is base64 written the one way these bytes encode. */
export function decodeBase64(text: string, padded: boolean): Buffer | undefined {
  if (!(padded ? PADDED : UNPADDED).test(text)) return undefined;
  const bytes = Buffer.from(text, 'base64');
  const again = bytes.toString('base64');
  return (padded ? again : again.replace(/=+$/, '')) === text ? bytes : undefined;
}
