/**
 * Pet ids: 41 bits of milliseconds since 2025-01-01 followed by 12 random bits. They fit in
 * 2^53 − 1 until 2094, so every JSON client holds them exactly, and they increase with creation
 * time, so the status index lists pets in creation order. Uniqueness does not rest on the random
 * bits: the repository writes with a condition and draws again on a collision.
 */
import { randomInt } from 'node:crypto';

export const ID_EPOCH_MS = Date.UTC(2025, 0, 1);
const ID_RANDOM_BITS = 12;
const RANDOM_RANGE = 2 ** ID_RANDOM_BITS;

export type IdGenerator = () => number;

export const newPetId = (nowMs: number = Date.now(), random: number = randomInt(RANDOM_RANGE)): number => {
  const id = (nowMs - ID_EPOCH_MS) * RANDOM_RANGE + random;
  if (!Number.isSafeInteger(id) || id < 1) throw new RangeError('The clock is outside the id range');
  return id;
};
