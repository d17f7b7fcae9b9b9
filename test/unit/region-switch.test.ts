/**
 * The regional switches share the idempotency table with the keyed creates' records and id
 * reservations: no key a request can make is a switch's, so no request drains or restores a region.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { stageSettings, stages } from '../../infra/stages';
import { idempotentRequest, idReservationKey } from '../../shared/idempotency';
import { PetStatus } from '../../shared/models';
import { REGION_NAME_PATTERN, REGION_SWITCH_PREFIX, regionSwitchKey } from '../../shared/region-switch';
import { idempotencyTable } from '../../shared/tables';
import { fuzzParameters } from '../support/arbitraries';

const keyOf = (key: Record<string, unknown>) => String(key[idempotencyTable.partitionKey.name]);

describe('the regional switches in the idempotency table', () => {
  it("keys a region's switch region#<region>, apart from every other region's", () => {
    const regions = Object.keys(stages).flatMap((stage) => stageSettings(stage).regions ?? []);
    expect(regions.length).toBeGreaterThan(1);
    const keys = regions.map((region) => keyOf(regionSwitchKey(region)));
    expect(keys.every((key) => key.startsWith(REGION_SWITCH_PREFIX))).toBe(true);
    expect(new Set(keys).size).toBe(new Set(regions).size);
    // Every region a stage lists is one the tool takes by name locally too.
    for (const region of regions) expect(region).toMatch(REGION_NAME_PATTERN);
  });

  it("writes no record or id reservation under a switch's key, whatever the caller, Idempotency-Key, pet or id", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.record({ name: fc.string(), categoryId: fc.integer(), status: fc.constantFrom(...PetStatus.options) }),
        fc.maxSafeNat(),
        (caller, idempotencyKey, newPet, petId) => {
          expect(idempotentRequest(caller, idempotencyKey, newPet).recordKey.startsWith(REGION_SWITCH_PREFIX)).toBe(false);
          expect(idReservationKey(petId).startsWith(REGION_SWITCH_PREFIX)).toBe(false);
        },
      ),
      fuzzParameters(0),
    );
  });
});
