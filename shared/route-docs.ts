/**
 * What the OpenAPI document says of each operation beyond what the route table (shared/routes.ts)
 * defines: its summary, its description, its success answer's description, and examples. Apart
 * from the route table, which every function's bundle holds (a handler parses by it, the
 * authorizer's policy reads it), so that no bundle carries the document's text.
 */
import type { OperationId, routes } from './routes';

export interface RouteDocs {
  readonly summary: string;
  /** What the operation does, beyond its summary. */
  readonly description?: string;
  /** An example request body, for an operation that takes one. */
  readonly bodyExample?: unknown;
  /** Its success answer (for an operation that has one): what it is, and an example body. */
  readonly success?: { readonly description: string; readonly example?: unknown };
}

const PET_EXAMPLE = { id: 244383887647238, name: 'Rex', categoryId: 1, status: 'available' } as const;

export const routeDocs = {
  listPets: {
    summary: 'List all animals',
    description:
      'One page of pets, at most `limit`. With `status`, only pets of that status, in creation order; without, in storage order. ' +
      'While more remain, the `Link rel="next"` header holds the next page\'s URL.',
    success: {
      description: 'One page of pets, in storage order (by creation with a status filter). A bare JSON array.',
      example: [PET_EXAMPLE],
    },
  },
  createPet: {
    summary: 'Add an animal',
    description:
      'Stores a new pet and answers it, with its id and its `Location`. ' +
      'With an `Idempotency-Key`, a retry answers the first result and creates nothing.',
    bodyExample: { name: 'Rex', categoryId: 1 },
    success: {
      description: 'The pet as stored, with its new id; for a repeated `Idempotency-Key`, the first answer again.',
      example: PET_EXAMPLE,
    },
  },
  getPet: {
    summary: 'Get an animal (deprecated: use GET /pets with a status filter)',
    success: { description: 'The pet.' },
  },
  listStoreOrders: {
    summary: 'List store orders (not implemented)',
    description: 'Named by the interface, never specified: answers 501 `not_implemented` after authentication.',
  },
  getHealth: {
    summary: 'Whether this region of the API can read its tables',
    description:
      'Answers 200 `{"status":"ok"}` when this region can read its pets, keys and idempotency tables, else 503; nothing more. ' +
      'For health checks: it needs no API key, and its answer is reused for a few seconds.',
    success: { description: 'This region can read its tables.', example: { status: 'ok' } },
  },
} as const satisfies Record<OperationId, RouteDocs>;

/** The resource a path acts on, by its first segment (`/store/orders` → `store`): it names the operation's tag. */
export type ResourceOf<Path extends string> = Path extends `/${infer Segment}/${string}`
  ? Segment
  : Path extends `/${infer Segment}`
    ? Segment
    : never;
export const resourceOf = (path: string): string => path.split('/')[1] ?? '';

/** A tag of the document: the name it groups a resource's operations under, and what they are. */
export interface TagDocs {
  readonly name: string;
  readonly description: string;
}

/** The tag of each resource of the route table: the compiler asks for a new resource's. */
export const tagDocs = {
  pets: { name: 'animals', description: 'The pets of the store.' },
  store: { name: 'store', description: 'Listed by the interface, not specified: answers 501.' },
  health: { name: 'health', description: 'Whether a region of the API can serve: for health checks, without a key.' },
} as const satisfies Record<ResourceOf<(typeof routes)[number]['path']>, TagDocs>;

/** The document's text of an operation. */
export const docsOf = (operationId: OperationId): RouteDocs => routeDocs[operationId];
