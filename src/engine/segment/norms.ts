/**
 * Field lengths are stored as one byte per document and field (like Lucene norms): exact up to
 * 32 tokens, then geometric buckets. Every leaf (mutable or segment) quantises through these two
 * functions, so a document scores the same before and after an epoch.
 */
const EXACT = 32;
const GROWTH = 1.06;

const DECODE = new Float64Array(256);
for (let b = 0; b < 256; b++) {
  DECODE[b] = b <= EXACT ? b : Math.round(EXACT * Math.pow(GROWTH, b - EXACT));
}

/** Quantises a field length (token count) into one byte. */
export function encodeNorm(length: number): number {
  if (length <= EXACT) return length;
  const b = EXACT + Math.floor(Math.log(length / EXACT) / Math.log(GROWTH));
  return b > 255 ? 255 : b;
}

/** The field length a norm byte stands for. */
export function decodeNorm(norm: number): number {
  return DECODE[norm]!;
}
