/**
 * Pet ids: 41 bits of milliseconds since 2025-01-01, then 3 bits naming the region that minted the
 * id, then 1 bit for the kind of create that minted it (keyed or not), then 8 random bits. They
 * fit in 2^53 − 1 until 2094-09-07, so every JSON client holds them exactly, and they increase
 * with creation time whatever the region, so the status index lists pets in creation order
 * (across regions, within the clocks' skew: docs/architecture.md, Regions).
 *
 * Two regions never mint the same id: their region bits differ. That is what makes ids unique
 * when a stage runs in several regions, where each region's conditional write sees only its own
 * copy of the table. Within a region, uniqueness does not rest on the random bits: the repository
 * writes with a condition and draws again on a collision.
 *
 * A keyed create's pet may be put in another region than the one that minted its id (a retry
 * after a failover replays it there), where that condition cannot see the minting region's pets.
 * So keyed ids are a space of their own, which no create without a key can draw, and each keyed id
 * is reserved in the strongly consistent idempotency table before any record names it
 * (shared/pets-repository.ts, `createOnce`).
 */
import { randomInt } from 'node:crypto';

export const ID_EPOCH_MS = Date.UTC(2025, 0, 1);
export const ID_TIME_BITS = 41;
export const ID_REGION_BITS = 3;
/** Keyed (1) or not (0): the two kinds of create never draw the same id. */
export const ID_KIND_BITS = 1;
export const ID_RANDOM_BITS = 8;
/** How many regions a stage may run in: each needs its own region index. */
export const REGION_COUNT = 2 ** ID_REGION_BITS;
const KIND_COUNT = 2 ** ID_KIND_BITS;
const RANDOM_RANGE = 2 ** ID_RANDOM_BITS;
/** The last millisecond an id can hold: its ids reach 2^53 − 1. */
export const LAST_ID_MS = ID_EPOCH_MS + 2 ** ID_TIME_BITS - 1;

/**
 * The function environment variable that tells a function which region it runs in: the region's
 * position in its stage's list of regions (infra/stages.ts), set by the stack. Unset: 0, a stage
 * in one region (and the local server).
 */
export const REGION_INDEX_VARIABLE = 'REGION_INDEX';

/** The create an id is minted for: one with an Idempotency-Key, or one without. */
export type IdKind = 'keyed' | 'unkeyed';

export type IdGenerator = (kind: IdKind) => number;

export interface PetIdParts {
  /** When the id is minted. @default now */
  readonly nowMs?: number;
  /** The index of the region that mints it, 0 to REGION_COUNT − 1. @default 0 */
  readonly region?: number;
  /** Minted for a keyed create. @default 'unkeyed' */
  readonly kind?: IdKind;
  /** 0 to 2^ID_RANDOM_BITS − 1. @default a random draw */
  readonly random?: number;
}

const isIndexBelow = (value: number, count: number) => Number.isInteger(value) && value >= 0 && value < count;

export const newPetId = ({
  nowMs = Date.now(),
  region = 0,
  kind = 'unkeyed',
  random = randomInt(RANDOM_RANGE),
}: PetIdParts = {}): number => {
  if (!isIndexBelow(region, REGION_COUNT)) throw new RangeError(`A region index is 0 to ${REGION_COUNT - 1}`);
  if (!isIndexBelow(random, RANDOM_RANGE)) throw new RangeError(`The random part of an id is 0 to ${RANDOM_RANGE - 1}`);
  const kindBit = kind === 'keyed' ? 1 : 0;
  const id = (((nowMs - ID_EPOCH_MS) * REGION_COUNT + region) * KIND_COUNT + kindBit) * RANDOM_RANGE + random;
  if (!Number.isSafeInteger(id) || id < 1) throw new RangeError('The clock is outside the id range');
  return id;
};

/**
 * The region index the environment gives, checked once when a function starts: a bad value stops
 * the function from starting rather than mint ids another region may also mint.
 */
export const regionIndexOf = (env: Readonly<Record<string, string | undefined>> = process.env): number => {
  const value = env[REGION_INDEX_VARIABLE];
  if (value === undefined || value === '') return 0;
  const index = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!isIndexBelow(index, REGION_COUNT)) {
    throw new Error(
      `${REGION_INDEX_VARIABLE} is '${value}': a region index is a whole number from 0 to ${REGION_COUNT - 1} ` +
        `(pet ids hold ${ID_REGION_BITS} bits of it).`,
    );
  }
  return index;
};

/** Mints ids for the region the environment names (see regionIndexOf), in the space of the kind asked. */
export const petIdGenerator = (env?: Readonly<Record<string, string | undefined>>): IdGenerator => {
  const region = regionIndexOf(env);
  return (kind) => newPetId({ region, kind });
};
