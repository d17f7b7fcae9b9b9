/** Which operations `npm run smoke` tries: every operation of the route table, or it says why not. */
import { describe, expect, it } from 'vitest';
import { CHECK_NAMES, SMOKE_CHECKS, SMOKE_COVERAGE, type SmokeCheck } from '../../tools/smoke/checks';
import { operationIds } from '../support/operations';

describe("the smoke's coverage of the route table", () => {
  it('names every operation, and no other', () => {
    expect(Object.keys(SMOKE_COVERAGE).sort()).toEqual([...operationIds].sort());
  });

  it.each(operationIds)('%s is tried by a check the smoke runs, or says why not', (operationId) => {
    const coverage = SMOKE_COVERAGE[operationId];
    if ('none' in coverage) {
      expect(coverage.none.length).toBeGreaterThan(20);
    } else {
      expect(coverage.length).toBeGreaterThan(0);
      for (const check of coverage) expect(CHECK_NAMES).toContain(check);
    }
  });

  it('names each check once, and each check learns only from checks that run before it', () => {
    expect(new Set(CHECK_NAMES).size).toBe(CHECK_NAMES.length);
    (SMOKE_CHECKS as readonly SmokeCheck[]).forEach((check, position) => {
      for (const source of check.learnsFrom ?? []) expect(CHECK_NAMES.slice(0, position), check.name).toContain(source);
    });
  });
});
