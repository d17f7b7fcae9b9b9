/**
 * Pagination cursors: opaque to clients, they carry the filter they belong to and the id of the
 * last pet of the page, with a checksum so that an edited or truncated cursor is refused rather
 * than silently starting the listing somewhere else. A cursor is not secret and grants nothing:
 * it only says where a listing resumes.
 */
import { hash } from 'node:crypto';
import { ApiError } from './errors';
import * as z from 'zod/mini';
import { CURSOR_MAX_LENGTH, PetId, PetStatus } from './models';

/** `s`: the listing's status filter (null when unfiltered); `k`: id of the page's last pet. */
const CursorPayload = z.strictObject({ s: z.nullable(PetStatus), k: PetId });
type CursorPayload = z.infer<typeof CursorPayload>;

const VERSION = 'v1';
const checksum = (payload: string): string => hash('sha256', `pet-store-cursor:${VERSION}:${payload}`, 'base64url').slice(0, 16);

export const encodeCursor = (status: PetStatus | undefined, lastId: number): string => {
  const payload = Buffer.from(JSON.stringify({ s: status ?? null, k: lastId } satisfies CursorPayload)).toString('base64url');
  return `${payload}.${checksum(payload)}`;
};

/** The id to resume after, or an `invalid_cursor` error when the cursor is not one of ours for this filter. */
export const decodeCursor = (cursor: string, status: PetStatus | undefined): number => {
  if (cursor.length > CURSOR_MAX_LENGTH) throw new ApiError('invalid_cursor');
  const [payload, sum, ...rest] = cursor.split('.');
  if (!payload || !sum || rest.length > 0 || sum !== checksum(payload)) throw new ApiError('invalid_cursor');
  const decoded = parsePayload(payload);
  if (!decoded) throw new ApiError('invalid_cursor');
  if (decoded.s !== (status ?? null)) {
    throw new ApiError('invalid_cursor', "Invalid query parameter 'cursor': it belongs to a listing with another status filter.");
  }
  return decoded.k;
};

const parsePayload = (payload: string): CursorPayload | undefined => {
  try {
    const parsed = CursorPayload.safeParse(JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined; // not JSON
  }
};
