/** Parsing untrusted input with zod, turning failures into 400s that name the offending part. */
import * as z from 'zod/mini';
import { API_KEY_PREFIX } from './api-keys';
import { ApiError } from './errors';

export type InputLocation = 'body' | 'query' | 'path';

const noun: Record<InputLocation, string> = {
  body: 'field',
  query: 'query parameter',
  path: 'path parameter',
};

/** Parses `input` with any zod schema (mini or classic), or throws a `validation_failed` ApiError whose message names the problem. */
export const parseInput = <Schema extends z.core.$ZodType>(schema: Schema, input: unknown, location: InputLocation): z.output<Schema> => {
  const result = z.safeParse(schema, input);
  if (result.success) return result.data;
  throw new ApiError('validation_failed', describeIssue(result.error.issues[0], input, location));
};

/** One sentence for one zod issue, e.g. "Invalid field 'categoryId': must be an integer …". */
export const describeIssue = (issue: z.core.$ZodIssue | undefined, input: unknown, location: InputLocation): string => {
  if (!issue) return `Invalid ${location}.`;
  const name = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    return `Unknown ${noun[location]} '${shownName(issue.keys[0] ?? '')}'${location === 'body' ? ' in the request body' : ''}.`;
  }
  if (name === '') {
    return location === 'body' ? 'The request body must be a JSON object.' : `Invalid ${location}.`;
  }
  if (issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined) {
    return `Missing required ${noun[location]} '${name}'.`;
  }
  return `Invalid ${noun[location]} '${name}': ${issue.message}.`;
};

const valueAt = (input: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (value, key) => (value !== null && typeof value === 'object' ? (value as Record<PropertyKey, unknown>)[key] : undefined),
    input,
  );

/** How much of a client's unknown name a message repeats: never an API key sent by mistake, never a page of text. */
const SHOWN_NAME_MAX_LENGTH = 64;
export const shownName = (name: string): string => {
  if (name.includes(API_KEY_PREFIX)) return `${name.slice(0, name.indexOf(API_KEY_PREFIX))}${API_KEY_PREFIX}…`;
  return name.length > SHOWN_NAME_MAX_LENGTH ? `${name.slice(0, SHOWN_NAME_MAX_LENGTH)}…` : name;
};
