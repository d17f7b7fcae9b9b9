/**
 * The API's data models, defined once. Handlers, the local server and (later) the OpenAPI
 * document all read them from here. Messages are written to finish the sentence
 * "Invalid field 'x': …", so the error formatter can name the offending field.
 */
import { en } from 'zod/locales';
import * as z from 'zod/mini';
import { ERROR_MESSAGE_MAX_LENGTH } from './errors';

// zod/mini, not classic zod: the same core and messages at a twentieth of the bundle size (the
// cold start pays for every byte). Mini ships no default messages; classic loads English ones,
// so this does too, for the few schemas below without their own message.
z.config(en());

/** Largest integer a JSON client can hold exactly (2^53 − 1). Ids and categoryIds stay below it. */
export const MAX_SAFE_ID = Number.MAX_SAFE_INTEGER;
/** Documented maximum length of a pet's name, in Unicode code points (as zod and JSON Schema's maxLength count). */
export const PET_NAME_MAX_LENGTH = 256;
/** Page size bounds of `GET /pets`, from the interface. */
export const LIST_LIMIT = { min: 1, max: 100, default: 20 } as const;
/** A cursor is opaque, but it is never longer than this. */
export const CURSOR_MAX_LENGTH = 512;

export const PetStatus = z.enum(['available', 'pending', 'sold'], {
  error: 'must be one of available, pending, sold',
});
export type PetStatus = z.infer<typeof PetStatus>;

/** A positive integer that a JSON client can hold exactly. */
const safeId = (what: string) => {
  const error = `must be an integer from 1 to ${MAX_SAFE_ID}`;
  return z.number({ error }).check(z.int({ error }), z.minimum(1, { error }), z.maximum(MAX_SAFE_ID, { error }), z.describe(what));
};

export const PetId = safeId('Unique identifier assigned by the service on creation.');
const CategoryId = safeId('Identifier of the category the animal belongs to.');

/** A name as stored: 1 to 256 code points, not blank. */
const storedPetName = z.string({ error: 'must be a string' }).check(
  z.minLength(1, { error: 'must not be empty' }),
  z.maxLength(PET_NAME_MAX_LENGTH, { error: `must be at most ${PET_NAME_MAX_LENGTH} characters` }),
  z.refine((name: string) => name.trim().length > 0, { error: 'must not be blank' }),
);

/** C0 (U+0000–U+001F, tab and newline included), DEL and C1 (U+0080–U+009F): Unicode's Cc. */
const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001F\u007F-\u009F]*$/;
/** In a `u` regex a paired surrogate is one code point, so `\p{Cs}` matches only a lone one. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * A name a client may send: also well-formed Unicode (a lone surrogate has no UTF-8 form, and
 * strict clients fail on the whole listing that holds it) and free of control characters.
 */
const PetName = storedPetName.check(
  z.regex(NO_CONTROL_CHARACTERS, { error: 'must not contain control characters (U+0000 to U+001F, U+007F to U+009F)' }),
  z.refine((name: string) => !LONE_SURROGATE.test(name), { error: 'must be well-formed Unicode (no lone surrogates)' }),
  z.describe("The animal's name: 1 to 256 characters, not blank, without control characters or lone surrogates."),
);

/** Request body of `POST /pets`. Unknown fields, a client-chosen `id` included, are rejected. */
export const NewPet = z.strictObject({
  name: PetName,
  categoryId: CategoryId,
  status: z._default(PetStatus, 'available'),
});
export type NewPet = z.infer<typeof NewPet>;

/**
 * A pet as the service returns it. Its name is read as stored: pets created before control
 * characters and lone surrogates were refused keep their names, and reading them must not fail.
 */
export const Pet = z.object({
  id: PetId,
  name: storedPetName.check(z.describe("The animal's name, as it was sent when the pet was created.")),
  categoryId: CategoryId,
  status: PetStatus,
});
export type Pet = z.infer<typeof Pet>;

/** A page of pets, as `GET /pets` answers it: at most LIST_LIMIT.max. */
export const Pets = z.array(Pet).check(z.maxLength(LIST_LIMIT.max));

/** What `GET /health` answers when the region can read its tables: this, and nothing more. */
export const Health = z.strictObject({ status: z.literal('ok') });
export type Health = z.infer<typeof Health>;

/** The one error shape: `status` repeats the HTTP status. */
export const ApiErrorBody = z.object({
  code: z.string(),
  message: z.string().check(z.maxLength(ERROR_MESSAGE_MAX_LENGTH)),
  status: z.number().check(z.int()),
});
export type ApiErrorBody = z.infer<typeof ApiErrorBody>;

/** A decimal integer as it appears in a URL: digits only, no sign, no leading zeros. */
const decimal = (error: string) => z.pipe(z.string().check(z.regex(/^[1-9][0-9]{0,15}$/, { error })), z.transform(Number));

const limitMessage = `must be an integer from ${LIST_LIMIT.min} to ${LIST_LIMIT.max}`;

/** Query of `GET /pets`. Values arrive as strings; unknown parameters are rejected. */
export const ListPetsQuery = z.strictObject({
  limit: z._default(
    z.pipe(decimal(limitMessage), z.number().check(z.maximum(LIST_LIMIT.max, { error: limitMessage }))),
    LIST_LIMIT.default,
  ),
  status: z.optional(PetStatus),
  // Any string: decodeCursor answers every bad cursor, empty and over-long ones too, with invalid_cursor.
  cursor: z.optional(z.string()),
});
export type ListPetsQuery = z.infer<typeof ListPetsQuery>;

/** Path of `GET /pets/{petId}`. */
export const GetPetPath = z.strictObject({
  petId: z.pipe(decimal(`must be an integer from 1 to ${MAX_SAFE_ID}`), PetId),
});
export type GetPetPath = z.infer<typeof GetPetPath>;

/** Query of `GET /pets/{petId}`: it takes no parameters, so any one is refused as unknown. */
export const GetPetQuery = z.strictObject({});
