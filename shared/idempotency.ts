/**
 * Idempotent creates: what identifies a keyed create and its request, and where its record sits
 * in the sweep's index. A keyed create reserves its pet's id, then writes its record, then its pet,
 * with no transaction (pets repository, `createOnce`; docs/architecture.md, "Idempotent creates,
 * record first"): the record's conditional put fixes the pet's id and fields, so that every retry,
 * in any region, finds the record and puts that same pet, under an id no other create holds, and
 * only where that id holds no item yet: a replay never overwrites the pet, so it never undoes a
 * later change to it. A record may stand without its pet for a while (the first try failed
 * between the writes); no pet ever stands without its record.
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

/**
 * The key of a keyed pet id's reservation, in the idempotency table beside the records: no record's
 * key (a hex hash) has this form.
 */
export const idReservationKey = (petId: number): string => `pet#${petId}`;
