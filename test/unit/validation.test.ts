/** parseInput and describeIssue: one 400 sentence that names the offending field or parameter. */
import { describe, expect, it } from 'vitest';
import { shownName } from '../../shared/validation';
import { z } from 'zod';
import { ApiError } from '../../shared/errors';
import { describeIssue, parseInput, type InputLocation } from '../../shared/validation';

const Schema = z.strictObject({
  size: z.number({ error: 'must be a number' }),
  owner: z.strictObject({ name: z.string({ error: 'must be a string' }) }),
});

const firstIssue = (input: unknown) => {
  const result = Schema.safeParse(input);
  if (result.success) throw new Error('expected a failure');
  return result.error.issues[0];
};

describe('describeIssue', () => {
  const valid = { size: 1, owner: { name: 'Ann' } };

  it.each([
    ['body', "Invalid field 'size': must be a number."],
    ['query', "Invalid query parameter 'size': must be a number."],
    ['path', "Invalid path parameter 'size': must be a number."],
  ] as const)('names a wrong-typed %s value with its location noun', (location, expected) => {
    const input = { ...valid, size: 'big' };
    expect(describeIssue(firstIssue(input), input, location)).toBe(expected);
  });

  it.each([
    ['body', "Missing required field 'size'."],
    ['query', "Missing required query parameter 'size'."],
    ['path', "Missing required path parameter 'size'."],
  ] as const)('says a %s value is missing when it is absent', (location, expected) => {
    const input = { owner: valid.owner };
    expect(describeIssue(firstIssue(input), input, location)).toBe(expected);
  });

  it('treats an explicit null as a wrong value, not as missing', () => {
    const input = { ...valid, size: null };
    expect(describeIssue(firstIssue(input), input, 'body')).toBe("Invalid field 'size': must be a number.");
  });

  it('names a nested field with a dotted path', () => {
    const input = { ...valid, owner: { name: 3 } };
    expect(describeIssue(firstIssue(input), input, 'body')).toBe("Invalid field 'owner.name': must be a string.");
    const missing = { ...valid, owner: {} };
    expect(describeIssue(firstIssue(missing), missing, 'body')).toBe("Missing required field 'owner.name'.");
  });

  it.each([
    ['body', "Unknown field 'extra' in the request body."],
    ['query', "Unknown query parameter 'extra'."],
    ['path', "Unknown path parameter 'extra'."],
  ] as const)('names an unknown %s key', (location, expected) => {
    const input = { ...valid, extra: 1 };
    expect(describeIssue(firstIssue(input), input, location)).toBe(expected);
  });

  it('asks for a JSON object when the body is not one', () => {
    expect(describeIssue(firstIssue([1]), [1], 'body')).toBe('The request body must be a JSON object.');
  });

  it.each(['body', 'query', 'path'] as const)('falls back to a generic sentence for %s without an issue', (location) => {
    expect(describeIssue(undefined, {}, location)).toBe(`Invalid ${location}.`);
  });

  it('says "Invalid query." for a query that is not an object', () => {
    expect(describeIssue(firstIssue('x'), 'x', 'query')).toBe('Invalid query.');
  });
});

describe('parseInput', () => {
  it('returns the parsed value, defaults applied', () => {
    const WithDefault = z.object({ n: z.number().default(5) });
    expect(parseInput(WithDefault, {}, 'body')).toEqual({ n: 5 });
  });

  it.each(['body', 'query', 'path'] satisfies InputLocation[])(
    'throws a 400 validation_failed ApiError whose message names the %s problem',
    (location) => {
      const input = { size: 'big', owner: { name: 'Ann' } };
      let thrown: unknown;
      try {
        parseInput(Schema, input, location);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ApiError);
      expect(thrown).toMatchObject({ code: 'validation_failed', status: 400 });
      expect((thrown as ApiError).message).toMatch(/'size': must be a number\.$/);
    },
  );
});

describe('names repeated in messages', () => {
  it('never repeats an API key sent as a name, and cuts long names short', () => {
    expect(shownName('petstore_Ul2NX1j_i5YhNlhrw0p8r-JHbfuBKL1cSeVVlGi2Jbg')).toBe('petstore_…');
    expect(shownName('x-petstore_secret')).toBe('x-petstore_…');
    expect(shownName('a'.repeat(100))).toBe(`${'a'.repeat(64)}…`);
    expect(shownName('extra')).toBe('extra');
  });
});
