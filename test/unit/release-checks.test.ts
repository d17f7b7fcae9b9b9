/**
 * Which functions the pre-traffic hook checks: every function a release releases has its check,
 * and every check its function, or the stack does not build (a version the hook never tried must
 * not take traffic).
 */
import { describe, expect, it } from 'vitest';
import { checkedFunctions, releaseChecks, FUNCTION_NAME_VARIABLES, UNCHECKED_OPERATIONS } from '../../shared/release-checks';
import { handledOperationIds, operationIds } from '../support/operations';
import { fixtureOperationId } from '../support/fixture-names';

/** What a release releases: each operation of the route table with a handler, and the authorizer. */
const releasedNames = [...handledOperationIds, 'authorizer'];
const released = (names: readonly string[]) => new Map(names.map((name) => [name, `${name} function`]));

describe('the functions the pre-traffic hook checks', () => {
  it('are every operation the route table gives a handler, and the authorizer: one check and one variable each', () => {
    expect(
      releaseChecks()
        .map(({ target }) => target)
        .sort(),
    ).toEqual([...releasedNames].sort());
    expect(Object.keys(FUNCTION_NAME_VARIABLES).sort()).toEqual([...releasedNames].sort());
  });

  it('cover every operation of the route table: each has a check, or says why it has none, never both', () => {
    const checked = new Set<string>(releaseChecks().map(({ target }) => target));
    for (const operationId of operationIds) {
      const reason: string | undefined = (UNCHECKED_OPERATIONS as Readonly<Record<string, string>>)[operationId];
      expect(checked.has(operationId) !== (reason !== undefined), operationId).toBe(true);
      if (reason !== undefined) expect(reason.length, operationId).toBeGreaterThan(20);
    }
    expect(Object.keys(UNCHECKED_OPERATIONS).every((operationId) => (operationIds as readonly string[]).includes(operationId))).toBe(true);
  });

  it('pairs each released function with its check', () => {
    expect(checkedFunctions(released(releasedNames))).toEqual(
      Object.keys(FUNCTION_NAME_VARIABLES).map((name) => [name, `${name} function`]),
    );
  });

  it('refuses a released function that has no check, naming it', () => {
    expect(() => checkedFunctions(released([...releasedNames, fixtureOperationId('unchecked')]))).toThrow(
      `No pre-traffic check for the released function(s) ${fixtureOperationId('unchecked')}.`,
    );
  });

  it('refuses a check whose function is not released, naming it', () => {
    expect(() => checkedFunctions(released(releasedNames.filter((name) => name !== 'getPet')))).toThrow(
      'No getPet function for the pre-traffic hook to check.',
    );
  });

  it("names each function's variable after it, in capitals with underscores, distinct", () => {
    const inCapitals = (name: string) => `${name.replace(/[A-Z]/g, (capital) => `_${capital}`).toUpperCase()}_FUNCTION_NAME`;
    expect(FUNCTION_NAME_VARIABLES).toEqual(
      Object.fromEntries(['authorizer', ...handledOperationIds].map((name) => [name, inCapitals(name)])),
    );
    expect(inCapitals('listPets')).toBe('LIST_PETS_FUNCTION_NAME');
    const variables = Object.values(FUNCTION_NAME_VARIABLES);
    expect(new Set(variables).size).toBe(variables.length);
  });
});
