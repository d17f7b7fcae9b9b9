/**
 * Idempotent creates: what identifies a keyed create and its request. A keyed create stores its
 * pet and an idempotency record in one DynamoDB transaction (pets repository, `createOnce`), so a
 * record exists exactly when its pet does: a retry finds either both or neither, and no "in
 * progress" state is ever visible.
 */
import { hash } from 'node:crypto';
import type { NewPet } from './models';

/** How long a key is remembered (the IETF draft suggests at least 24 hours). */
export const IDEMPOTENCY_WINDOW_SECONDS = 24 * 60 * 60;

/** A keyed create, as the repository stores it: hashes only, never the client's id or Idempotency-Key. */
export interface IdempotentRequest {
  /** The record's key: a hash of the client (callerOf) and the Idempotency-Key. */
  readonly recordKey: string;
  /** A hash of the validated request: the same pet, whatever the field order or defaults. */
  readonly requestHash: string;
}

const sha256 = (text: string): string => hash('sha256', text, 'hex');

export const idempotentRequest = (caller: string, idempotencyKey: string, newPet: NewPet): IdempotentRequest => ({
  recordKey: sha256(`${caller}\n${idempotencyKey}`),
  // Fields in a fixed order: the validated pet, not the bytes the client sent.
  requestHash: sha256(JSON.stringify([newPet.name, newPet.categoryId, newPet.status])),
});
