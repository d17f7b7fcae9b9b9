/** The request models: what POST /pets, GET /pets and GET /pets/{petId} accept, and the 400 message for what they refuse. */
import { describe, expect, it } from 'vitest';
import type * as z from 'zod/mini';
import { ApiError } from '../../shared/errors';
import { GetPetPath, GetPetQuery, ListPetsQuery, NewPet, Pet, PET_NAME_MAX_LENGTH } from '../../shared/models';
import { parseInput, type InputLocation } from '../../shared/validation';

const MAX_SAFE = 2 ** 53 - 1;
const ID_RANGE = `must be an integer from 1 to ${MAX_SAFE}`;

/** The validation_failed error's message for an input the schema refuses. */
const refusal = (schema: z.ZodMiniType, input: unknown, location: InputLocation): string => {
  try {
    parseInput(schema, input, location);
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ code: 'validation_failed', status: 400 });
    return (error as ApiError).message;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be refused`);
};

describe('NewPet (body of POST /pets)', () => {
  const valid = { name: 'Rex', categoryId: 1 };

  it('accepts name and categoryId, and starts the pet as available when no status is given', () => {
    expect(parseInput(NewPet, valid, 'body')).toEqual({ name: 'Rex', categoryId: 1, status: 'available' });
  });

  it.each(['available', 'pending', 'sold'] as const)('keeps the status %s', (status) => {
    expect(parseInput(NewPet, { ...valid, status }, 'body').status).toBe(status);
  });

  it.each(['Available', 'SOLD', 'adopted', ''])('refuses the status %j (case-sensitive enum)', (status) => {
    expect(refusal(NewPet, { ...valid, status }, 'body')).toBe("Invalid field 'status': must be one of available, pending, sold.");
  });

  it('refuses a null status rather than defaulting it', () => {
    expect(refusal(NewPet, { ...valid, status: null }, 'body')).toMatch(/^Invalid field 'status'/);
  });

  it.each([1, MAX_SAFE])('accepts categoryId %d', (categoryId) => {
    expect(parseInput(NewPet, { ...valid, categoryId }, 'body').categoryId).toBe(categoryId);
  });

  it.each([
    ['a numeric string', '1'],
    ['a fraction', 1.5],
    ['zero', 0],
    ['a negative number', -1],
    ['2^53', 2 ** 53],
    ['null', null],
    ['a boolean', true],
  ])('refuses categoryId as %s, naming the field', (_, categoryId) => {
    expect(refusal(NewPet, { ...valid, categoryId }, 'body')).toBe(`Invalid field 'categoryId': ${ID_RANGE}.`);
  });

  it('says which required field is missing', () => {
    expect(refusal(NewPet, { categoryId: 1 }, 'body')).toBe("Missing required field 'name'.");
    expect(refusal(NewPet, { name: 'Rex' }, 'body')).toBe("Missing required field 'categoryId'.");
  });

  it('accepts a name of exactly 256 characters (the documented maximum), and refuses 257', () => {
    expect(PET_NAME_MAX_LENGTH).toBe(256);
    const longest = 'x'.repeat(256);
    expect(parseInput(NewPet, { ...valid, name: longest }, 'body').name).toBe(longest);
    expect(refusal(NewPet, { ...valid, name: `${longest}x` }, 'body')).toBe("Invalid field 'name': must be at most 256 characters.");
  });

  it('refuses an empty name and a blank one', () => {
    expect(refusal(NewPet, { ...valid, name: '' }, 'body')).toBe("Invalid field 'name': must not be empty.");
    expect(refusal(NewPet, { ...valid, name: ' \t\n ' }, 'body')).toBe("Invalid field 'name': must not be blank.");
  });

  it('refuses a name that is not a string', () => {
    expect(refusal(NewPet, { ...valid, name: 42 }, 'body')).toBe("Invalid field 'name': must be a string.");
    expect(refusal(NewPet, { ...valid, name: null }, 'body')).toBe("Invalid field 'name': must be a string.");
  });

  it('keeps a name with surrounding spaces as sent', () => {
    expect(parseInput(NewPet, { ...valid, name: ' Rex ' }, 'body').name).toBe(' Rex ');
  });

  const CONTROL = "Invalid field 'name': must not contain control characters (U+0000 to U+001F, U+007F to U+009F).";
  it.each([
    ['NUL', 'Rex\u0000'],
    ['U+001F, the last C0 character', '\u001fRex'],
    ['a tab', 'Rex\tMax'],
    ['a line feed', 'Rex\n'],
    ['a carriage return', 'Rex\r\nMax'],
    ['DEL', 'Rex\u007f'],
    ['U+0080, the first C1 character', 'Re\u0080x'],
    ['NEL (U+0085)', 'Rex\u0085Max'],
    ['U+009F, the last C1 character', 'Rex\u009f'],
  ])('refuses a name with %s, naming the field', (_, name) => {
    expect(refusal(NewPet, { ...valid, name }, 'body')).toBe(CONTROL);
  });

  it.each([
    ['a lone high surrogate', '\ud800'],
    ['a lone low surrogate after text', 'Rex\udfff'],
    ['surrogates in the wrong order', '\udc00\ud800'],
    ['half of an emoji', '😀'.slice(0, 1)],
  ])('refuses a name with %s, naming the field', (_, name) => {
    expect(refusal(NewPet, { ...valid, name }, 'body')).toBe("Invalid field 'name': must be well-formed Unicode (no lone surrogates).");
  });

  it.each([
    ['emoji (surrogate pairs)', '😀 Rex 👨‍👩‍👧'],
    ['combining marks', 'Re\u0301x'],
    ['U+00A0, just past C1', 'Rex\u00a0Max'],
    ['U+007E, just before DEL', 'Rex~'],
    ['format characters, which are not controls', '\u202eRex\u200b'],
    ['U+FFFD', 'Rex\ufffd'],
    ['the highest code point', 'Rex\u{10ffff}'],
  ])('accepts a name with %s', (_, name) => {
    expect(parseInput(NewPet, { ...valid, name }, 'body').name).toBe(name);
  });

  it.each(['id', 'color'])('refuses the unknown field %s and names it', (field) => {
    expect(refusal(NewPet, { ...valid, [field]: 7 }, 'body')).toBe(`Unknown field '${field}' in the request body.`);
  });

  it.each([null, [], 'Rex', 1])('refuses a body that is not a JSON object (%j)', (body) => {
    expect(refusal(NewPet, body, 'body')).toBe('The request body must be a JSON object.');
  });
});

describe('Pet (a pet as read back)', () => {
  it.each([
    ['a control character', 'Rex\u0000'],
    ['a lone surrogate', 'Rex\ud800'],
  ])('reads a name stored with %s before such names were refused', (_, name) => {
    const stored = { id: 1, name, categoryId: 1, status: 'available' };
    expect(Pet.parse(stored)).toEqual(stored);
  });
});

describe('ListPetsQuery (query of GET /pets)', () => {
  it('defaults limit to 20 and leaves status and cursor out', () => {
    expect(parseInput(ListPetsQuery, {}, 'query')).toEqual({ limit: 20 });
  });

  it.each([
    ['1', 1],
    ['20', 20],
    ['100', 100],
  ])('accepts limit %s', (limit, expected) => {
    expect(parseInput(ListPetsQuery, { limit }, 'query').limit).toBe(expected);
  });

  it.each(['0', '101', 'abc', '1.5', '-1', '007', '', ' 5', '1e2', '99999999999999999'])(
    'refuses limit %j, naming the parameter',
    (limit) => {
      expect(refusal(ListPetsQuery, { limit }, 'query')).toBe("Invalid query parameter 'limit': must be an integer from 1 to 100.");
    },
  );

  it.each(['available', 'pending', 'sold'] as const)('accepts status %s', (status) => {
    expect(parseInput(ListPetsQuery, { status }, 'query')).toEqual({ limit: 20, status });
  });

  it.each(['Available', 'PENDING', 'gone'])('refuses status %s (case-sensitive)', (status) => {
    expect(refusal(ListPetsQuery, { status }, 'query')).toBe("Invalid query parameter 'status': must be one of available, pending, sold.");
  });

  it('refuses an unknown parameter, naming it', () => {
    expect(refusal(ListPetsQuery, { offset: '10' }, 'query')).toBe("Unknown query parameter 'offset'.");
  });

  it('passes a cursor through unread (the cursor module checks it)', () => {
    expect(parseInput(ListPetsQuery, { cursor: 'abc.def' }, 'query')).toEqual({ limit: 20, cursor: 'abc.def' });
  });
});

describe('GetPetPath (path of GET /pets/{petId})', () => {
  it.each([
    ['1', 1],
    ['100', 100],
    [String(MAX_SAFE), MAX_SAFE],
  ])('accepts petId %s as the number %d', (petId, expected) => {
    expect(parseInput(GetPetPath, { petId }, 'path')).toEqual({ petId: expected });
  });

  it.each(['0', '-1', 'abc', '1.5', '007', '2e3', '', String(2 ** 53), '99999999999999999', '1 '])(
    'refuses petId %j, naming the parameter',
    (petId) => {
      expect(refusal(GetPetPath, { petId }, 'path')).toBe(`Invalid path parameter 'petId': ${ID_RANGE}.`);
    },
  );

  it('refuses a missing petId', () => {
    expect(refusal(GetPetPath, {}, 'path')).toBe("Missing required path parameter 'petId'.");
  });

  it('refuses a numeric petId: path parameters arrive as strings', () => {
    expect(refusal(GetPetPath, { petId: 1 }, 'path')).toMatch(/^Invalid path parameter 'petId'/);
  });
});

describe('GetPetQuery (query of GET /pets/{petId})', () => {
  it('accepts no parameters', () => {
    expect(parseInput(GetPetQuery, {}, 'query')).toEqual({});
  });

  it.each(['x', 'limit', 'api_key', ''])('refuses the parameter %j, naming it', (name) => {
    expect(refusal(GetPetQuery, { [name]: '1' }, 'query')).toBe(`Unknown query parameter '${name}'.`);
  });
});
