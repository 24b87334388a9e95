/**
 * CRC32C of a concatenation from the CRCs of its parts: crc(A || B) = shift(crc(A), |B|) ^ crc(B),
 * where shifting a CRC past n bytes multiplies it by x^(8n) modulo the Castagnoli polynomial (the
 * initial and final complements cancel out). Polynomials are held bit-reflected as the CRC is:
 * bit 31 is the coefficient of x^0, bit 0 that of x^31.
 */

/** The Castagnoli polynomial, bit-reflected (x^32 implied). */
const POLYNOMIAL = 0x82f63b78;

/** x^0, the polynomial 1. */
const ONE = 0x80000000;

/** a * b modulo the polynomial. */
function multiplyModulo(a: number, b: number): number {
  let product = 0;
  let multiplier = b >>> 0;
  // Walks a's coefficients from x^0 up while multiplier runs through b * x^k.
  for (let bit = ONE; bit !== 0; bit >>>= 1) {
    if ((a & bit) !== 0) product ^= multiplier;
    multiplier = multiplier & 1 ? (multiplier >>> 1) ^ POLYNOMIAL : multiplier >>> 1;
  }
  return product >>> 0;
}

/** x^(2^k) modulo the polynomial for k = 0..63 (the powers repeat long before any byte count matters). */
const POWERS_OF_TWO_EXPONENT: Uint32Array = (() => {
  const powers = new Uint32Array(64);
  powers[0] = ONE >>> 1;
  for (let k = 1; k < powers.length; k++) powers[k] = multiplyModulo(powers[k - 1]!, powers[k - 1]!);
  return powers;
})();

/** x^(8 * bytes) modulo the polynomial: the factor that shifts a CRC past `bytes` zero bytes. */
function shiftFactor(bytes: number): number {
  let factor = ONE;
  // Bit k of 8 * bytes selects x^(2^k); a safe integer has at most 53 bits, plus 3 for the factor 8.
  let remaining = bytes;
  for (let k = 3; remaining > 0; k++) {
    if (remaining % 2 === 1) factor = multiplyModulo(POWERS_OF_TWO_EXPONENT[k]!, factor);
    remaining = Math.floor(remaining / 2);
  }
  return factor;
}

/** CRC32C of A || B from crc(A), crc(B) and the length of B in bytes. */
export function crc32cCombine(crcA: number, crcB: number, lengthB: number): number {
  if (!Number.isSafeInteger(lengthB) || lengthB < 0) throw new RangeError(`invalid length ${lengthB}`);
  return (multiplyModulo(shiftFactor(lengthB), crcA) ^ crcB) >>> 0;
}

/**
 * Combining with a fixed length of B, precomputed: shifting is linear over GF(2), so it is the
 * XOR of the shifts of each byte of the CRC, four table look-ups.
 */
export class Crc32cShift {
  private readonly table = new Uint32Array(4 * 256);

  /** The operator for parts B of `length` bytes. */
  constructor(readonly length: number) {
    if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`invalid length ${length}`);
    const factor = shiftFactor(length);
    for (let lane = 0; lane < 4; lane++) {
      for (let value = 0; value < 256; value++) this.table[lane * 256 + value] = multiplyModulo(factor, value << (8 * lane));
    }
  }

  /** CRC32C of A || B from crc(A) and crc(B), B being `length` bytes long. */
  combine(crcA: number, crcB: number): number {
    const table = this.table;
    const shifted = table[crcA & 0xff]! ^ table[256 + ((crcA >>> 8) & 0xff)]! ^ table[512 + ((crcA >>> 16) & 0xff)]! ^ table[768 + (crcA >>> 24)]!;
    return (shifted ^ crcB) >>> 0;
  }
}
