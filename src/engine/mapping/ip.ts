/**
 * IP addresses as an `ip` field indexes them: IPv4 and IPv6 both become 16 bytes (IPv4 as the
 * IPv4-mapped IPv6 address `::ffff:a.b.c.d`, as Elasticsearch does), written as 32 lowercase hex
 * digits. That term sorts like the address bytes, so ranges and CIDR blocks are term ranges and
 * sorting is by address. Rendering gives the dotted form for IPv4-mapped addresses and the
 * RFC 5952 compressed form otherwise.
 */

/** Length of an encoded address term. */
export const IP_TERM_LENGTH = 32;

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;
const HEX_GROUP = /^[0-9a-fA-F]{1,4}$/;

/** The 16 bytes of an address, or null when the text is not an IPv4 or IPv6 address. */
export function parseIpBytes(text: string): Uint8Array | null {
  if (text.length === 0 || text.length > 45) return null;
  const v4 = parseIpv4(text);
  if (v4 !== null) {
    const bytes = new Uint8Array(16);
    bytes[10] = 0xff;
    bytes[11] = 0xff;
    bytes.set(v4, 12);
    return bytes;
  }
  return parseIpv6(text);
}

function parseIpv4(text: string): number[] | null {
  const match = IPV4.exec(text);
  if (match === null) return null;
  const parts = match.slice(1, 5).map(Number);
  return parts.every((part, index) => part <= 255 && (match[index + 1]!.length === 1 || match[index + 1]![0] !== '0')) ? parts : null;
}

function parseIpv6(text: string): Uint8Array | null {
  if (!text.includes(':')) return null;
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (half: string): string[] => (half === '' ? [] : half.split(':'));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  const words: number[] = [];
  const readGroups = (list: string[], out: number[], allowV4Last: boolean): boolean => {
    for (let index = 0; index < list.length; index++) {
      const group = list[index]!;
      if (allowV4Last && index === list.length - 1 && group.includes('.')) {
        const v4 = parseIpv4(group);
        if (v4 === null) return false;
        out.push((v4[0]! << 8) | v4[1]!, (v4[2]! << 8) | v4[3]!);
      } else if (HEX_GROUP.test(group)) {
        out.push(parseInt(group, 16));
      } else {
        return false;
      }
    }
    return true;
  };
  const headWords: number[] = [];
  const tailWords: number[] = [];
  if (!readGroups(head, headWords, halves.length === 1)) return null;
  if (!readGroups(tail, tailWords, true)) return null;
  if (halves.length === 1) {
    if (headWords.length !== 8) return null;
    words.push(...headWords);
  } else {
    const gap = 8 - headWords.length - tailWords.length;
    if (gap < 1) return null;
    words.push(...headWords, ...new Array<number>(gap).fill(0), ...tailWords);
  }
  const bytes = new Uint8Array(16);
  for (let index = 0; index < 8; index++) {
    bytes[index * 2] = words[index]! >> 8;
    bytes[index * 2 + 1] = words[index]! & 0xff;
  }
  return bytes;
}

/** The indexed term of an address, or null when the text is not an address. */
export function encodeIp(text: string): string | null {
  const bytes = parseIpBytes(text);
  return bytes === null ? null : bytesToTerm(bytes);
}

function bytesToTerm(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('hex');
}

/** The address an indexed term stands for (the term itself when it is not one). */
export function decodeIp(term: string): string {
  if (term.length !== IP_TERM_LENGTH || !/^[0-9a-f]+$/.test(term)) return term;
  const bytes = Buffer.from(term, 'hex');
  let mapped = bytes[10] === 0xff && bytes[11] === 0xff;
  for (let index = 0; index < 10 && mapped; index++) if (bytes[index] !== 0) mapped = false;
  if (mapped) return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
  const words: number[] = [];
  for (let index = 0; index < 8; index++) words.push((bytes[index * 2]! << 8) | bytes[index * 2 + 1]!);
  // RFC 5952: the longest run (at least two) of zero words becomes `::`, the first such run on a tie.
  let bestStart = -1;
  let bestLength = 1;
  for (let start = 0; start < 8; ) {
    if (words[start] !== 0) {
      start++;
      continue;
    }
    let end = start;
    while (end < 8 && words[end] === 0) end++;
    if (end - start > bestLength) {
      bestStart = start;
      bestLength = end - start;
    }
    start = end;
  }
  const hex = words.map((word) => word.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

/** Lowest and highest terms of a CIDR block (`10.0.0.0/8`, `2001:db8::/32`), or null when malformed. */
export function cidrTermRange(text: string): { lower: string; upper: string } | null {
  const slash = text.indexOf('/');
  if (slash < 0) return null;
  const bytes = parseIpBytes(text.slice(0, slash));
  const lengthText = text.slice(slash + 1);
  if (bytes === null || !/^\d{1,3}$/.test(lengthText)) return null;
  const isV4 = parseIpv4(text.slice(0, slash)) !== null;
  const prefix = Number(lengthText) + (isV4 ? 96 : 0);
  if (prefix > 128) return null;
  const lower = new Uint8Array(bytes);
  const upper = new Uint8Array(bytes);
  for (let bit = prefix; bit < 128; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    lower[byte] = lower[byte]! & ~mask;
    upper[byte] = upper[byte]! | mask;
  }
  return { lower: bytesToTerm(lower), upper: bytesToTerm(upper) };
}
