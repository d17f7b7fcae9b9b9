/**
 * Pet ids: safe integers from 1, unique across regions by construction, keyed and unkeyed creates'
 * ids apart by construction, increasing with creation time whatever the region, until 2094.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  ID_EPOCH_MS,
  type IdKind,
  LAST_ID_MS,
  newPetId,
  petIdGenerator,
  REGION_COUNT,
  REGION_INDEX_VARIABLE,
  regionIndexOf,
} from '../../shared/ids';

/** The layout docs/architecture.md states: 41 bits of milliseconds, 3 of region, 1 of kind (keyed or not), 8 random. */
const REGIONS = 8;
const KINDS = 2;
const RANDOM_RANGE = 256;
/** An id read back from its layout. */
const partsOf = (id: number) => ({
  nowMs: Math.floor(id / (REGIONS * KINDS * RANDOM_RANGE)) + ID_EPOCH_MS,
  region: Math.floor(id / (KINDS * RANDOM_RANGE)) % REGIONS,
  kind: (Math.floor(id / RANDOM_RANGE) % KINDS === 1 ? 'keyed' : 'unkeyed') as IdKind,
  random: id % RANDOM_RANGE,
});
const mintedAt = (id: number): Date => new Date(partsOf(id).nowMs);

const instant = fc.integer({ min: ID_EPOCH_MS + 1, max: LAST_ID_MS });
const region = fc.integer({ min: 0, max: REGIONS - 1 });
const random = fc.integer({ min: 0, max: RANDOM_RANGE - 1 });
const kind = fc.constantFrom<IdKind>('keyed', 'unkeyed');
const parts = fc.record({ nowMs: instant, region, kind, random });
/** Parts that often share a millisecond, a region, a kind or a random draw with each other. */
const nearParts = fc.record({
  nowMs: fc.integer({ min: 0, max: 2 }).map((ms) => ID_EPOCH_MS + 1 + ms),
  region,
  kind,
  random: fc.constantFrom(0, 1, RANDOM_RANGE - 1),
});

describe('newPetId', () => {
  it('mints a safe integer of at least 1 now', () => {
    for (let i = 0; i < 200; i += 1) {
      const id = newPetId();
      expect(Number.isSafeInteger(id)).toBe(true);
      expect(id).toBeGreaterThanOrEqual(1);
    }
  });

  it('counts from 2025-01-01', () => {
    expect(ID_EPOCH_MS).toBe(Date.parse('2025-01-01T00:00:00Z'));
    expect(newPetId({ nowMs: ID_EPOCH_MS, random: 1 })).toBe(1);
    expect(newPetId({ nowMs: ID_EPOCH_MS + 1, random: 0 })).toBe(REGIONS * KINDS * RANDOM_RANGE);
  });

  it('has room for 8 regions', () => {
    expect(REGION_COUNT).toBe(REGIONS);
    expect(() => newPetId({ region: REGIONS - 1 })).not.toThrow();
  });

  it('gives two regions different ids for the same millisecond and the same random draw, of either kind', () => {
    const nowMs = Date.parse('2026-06-01T12:00:00Z');
    const ids = Array.from({ length: REGIONS }, (_, index) =>
      (['keyed', 'unkeyed'] as const).map((minted) => newPetId({ nowMs, region: index, kind: minted, random: 7 })),
    ).flat();
    expect(new Set(ids).size).toBe(REGIONS * KINDS);
  });

  it('gives a keyed create an id no create without a key can mint, and the other way round', () => {
    fc.assert(
      fc.property(parts, parts, (a, b) => {
        expect(newPetId({ ...a, kind: 'keyed' })).not.toBe(newPetId({ ...b, kind: 'unkeyed' }));
      }),
    );
    fc.assert(
      fc.property(nearParts, nearParts, (a, b) => {
        expect(newPetId({ ...a, kind: 'keyed' })).not.toBe(newPetId({ ...b, kind: 'unkeyed' }));
      }),
    );
    // Without a kind, the id is a create's without a key.
    expect(partsOf(newPetId()).kind).toBe('unkeyed');
  });

  it('maps each (millisecond, region, kind, random draw) to its own id', () => {
    fc.assert(
      fc.property(parts, (minted) => {
        expect(partsOf(newPetId(minted))).toEqual(minted);
      }),
    );
    fc.assert(
      fc.property(nearParts, nearParts, (a, b) => {
        const same = a.nowMs === b.nowMs && a.region === b.region && a.kind === b.kind && a.random === b.random;
        expect(newPetId(a) === newPetId(b)).toBe(same);
      }),
    );
  });

  it('increases with time whatever the region, the kind and the random bits', () => {
    fc.assert(
      fc.property(parts, parts, (a, b) => {
        fc.pre(a.nowMs !== b.nowMs);
        const [earlier, later] = a.nowMs < b.nowMs ? [a, b] : [b, a];
        expect(newPetId(earlier)).toBeLessThan(newPetId(later));
      }),
    );
    const now = Date.parse('2026-06-01T12:00:00Z');
    expect(newPetId({ nowMs: now, region: REGIONS - 1, kind: 'keyed', random: RANDOM_RANGE - 1 })).toBeLessThan(
      newPetId({ nowMs: now + 1, region: 0, kind: 'unkeyed', random: 0 }),
    );
    expect(newPetId()).toBeLessThan(newPetId({ nowMs: Date.now() + 1000 }));
  });

  it('stays a safe integer until its last millisecond, in September 2094', () => {
    expect(new Date(LAST_ID_MS).toISOString()).toBe('2094-09-07T15:47:35.551Z');
    fc.assert(
      fc.property(parts, (minted) => {
        expect(Number.isSafeInteger(newPetId(minted))).toBe(true);
      }),
    );
    expect(newPetId({ nowMs: LAST_ID_MS, region: REGIONS - 1, kind: 'keyed', random: RANDOM_RANGE - 1 })).toBe(Number.MAX_SAFE_INTEGER);
  });

  it('throws a RangeError one millisecond later rather than mint an unsafe id', () => {
    expect(() => newPetId({ nowMs: LAST_ID_MS + 1, region: 0, random: 0 })).toThrow(RangeError);
  });

  it('throws before its epoch and at an id of 0', () => {
    expect(() => newPetId({ nowMs: ID_EPOCH_MS - 1, region: REGIONS - 1, kind: 'keyed', random: RANDOM_RANGE - 1 })).toThrow(RangeError);
    expect(() => newPetId({ nowMs: ID_EPOCH_MS, region: 0, random: 0 })).toThrow(RangeError);
  });

  it.each([REGIONS, -1, 1.5, Number.NaN])('refuses the region index %s, which would overlap another region', (index) => {
    expect(() => newPetId({ region: index })).toThrow(RangeError);
  });

  it.each([RANDOM_RANGE, -1, 0.5])('refuses the random part %s, which would overlap another kind or region', (draw) => {
    expect(() => newPetId({ random: draw })).toThrow(RangeError);
  });
});

describe('the time in an id', () => {
  it.each(['2025-01-01T00:00:00.001Z', '2026-03-14T15:09:26.535Z', '2094-01-01T00:00:00.000Z'])(
    'gives back the millisecond an id was minted (%s)',
    (iso) => {
      const nowMs = Date.parse(iso);
      for (const [index, draw] of [
        [0, 0],
        [3, 123],
        [REGIONS - 1, RANDOM_RANGE - 1],
      ] as const) {
        for (const minted of ['keyed', 'unkeyed'] as const) {
          expect(mintedAt(newPetId({ nowMs, region: index, kind: minted, random: draw })).toISOString()).toBe(iso);
        }
      }
    },
  );

  it('places a fresh id at the current time', () => {
    const before = Date.now();
    const time = mintedAt(newPetId()).getTime();
    expect(time).toBeGreaterThanOrEqual(before);
    expect(time).toBeLessThanOrEqual(Date.now());
  });
});

describe('the region index a function runs with', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.resetModules();
  });

  it('is 0 when the stack sets none: a stage in one region, the local server', () => {
    expect(regionIndexOf({})).toBe(0);
    expect(partsOf(petIdGenerator({})('unkeyed')).region).toBe(0);
  });

  it('is what REGION_INDEX says, and the ids minted carry it, with the kind asked', () => {
    for (let index = 0; index < REGIONS; index += 1) {
      const env = { [REGION_INDEX_VARIABLE]: String(index) };
      expect(regionIndexOf(env)).toBe(index);
      for (const minted of ['keyed', 'unkeyed'] as const) {
        expect(partsOf(petIdGenerator(env)(minted))).toMatchObject({ region: index, kind: minted });
      }
    }
  });

  it.each(['8', '-1', '1.0', ' 1', '0x1', 'eu-west-1', '99999999999999999999'])('refuses REGION_INDEX=%j in one clear line', (value) => {
    expect(() => regionIndexOf({ [REGION_INDEX_VARIABLE]: value })).toThrow(
      /^REGION_INDEX is '.*': a region index is a whole number from 0 to 7 \(pet ids hold 3 bits of it\)\.$/,
    );
  });

  it('stops the create function from starting with a bad one, before any request reaches it', async () => {
    vi.stubEnv(REGION_INDEX_VARIABLE, '8');
    vi.resetModules();
    await expect(import('../../functions/create-pet')).rejects.toThrow(/^REGION_INDEX is '8'/);
  });
});
