/**
 * The budgets of the bundles on a request's path (each operation's function, and the authorizer,
 * which runs on every request whose key misses the authorizer cache), defined once and derived from
 * the route table: the bytes a bundle may have and what it must not take in, which `npm test` holds
 * (test/infra/bundles.test.ts), and the import time, which `npm run bench` holds (it varies with the
 * machine; bytes do not). A cold start parses every byte of a bundle.
 */
import { routes, type HandledOperationId, type Route } from '../shared/routes';
import { AUTHORIZER_ENTRY } from './constructs/pet-store-functions';

/** What a bundle must not take in: an npm package, or a module of the project by its path. */
export interface Exclusion {
  readonly module: string;
  /** Why, in a few words: what the route or the design says. */
  readonly why: string;
}

export interface BundleBudget {
  /** The function's name in the stack. */
  readonly name: HandledOperationId | 'authorizer';
  /** Its handler module, relative to the project root. */
  readonly entry: string;
  /** The most bytes its minified bundle may have (KB = 1,000 bytes). */
  readonly maxBytes: number;
  /** The most CPU time its import may take, as a fraction of the floor's (a bundle that only builds a DocumentClient). */
  readonly importRatio: number;
  readonly excludes: readonly Exclusion[];
}

/** An operation's function: what every request of it loads on a cold start. */
export const OPERATION_BUNDLE_BYTES = 250_000;
export const OPERATION_IMPORT_RATIO = 0.7;
/** The authorizer: on the path of every operation, so a tighter budget. */
export const AUTHORIZER_BUNDLE_BYTES = 210_000;
export const AUTHORIZER_IMPORT_RATIO = 0.62;

/** What no bundle on a request's path takes in. */
const REQUEST_PATH_EXCLUDES: readonly Exclusion[] = [
  // The operations' counts come from their access lines (infra/constructs/request-metrics.ts).
  { module: '@aws-lambda-powertools/metrics', why: 'a request writes no metric line: its access line is counted' },
  // The SDK's endpoint discovery cache, which DynamoDB never reads (infra/bundling.ts LAMBDA_ALIASES).
  { module: 'mnemonist', why: "endpoint discovery's cache: no DynamoDB command uses it" },
  // A stage that allows no CORS origin (each stage by default) builds without CORS (infra/bundling.ts).
  { module: '@middy/http-cors', why: 'the stage allows no CORS origin' },
];

/** Whether a route's function writes a table: one that only reads holds no write. */
const writes = (route: Route): boolean =>
  (route.tableAccess ?? []).some(({ actions }) => actions.some((action) => /:(Put|Update|Delete|BatchWrite|TransactWrite)/.test(action)));

const operationBudget = (route: Route & { readonly handler: string }): BundleBudget => ({
  name: route.operationId as HandledOperationId,
  entry: route.handler,
  maxBytes: OPERATION_BUNDLE_BYTES,
  importRatio: OPERATION_IMPORT_RATIO,
  excludes: [
    ...REQUEST_PATH_EXCLUDES,
    ...(route.request?.body === undefined ? [{ module: 'shared/http/json-body.ts', why: 'its route takes no body' }] : []),
    ...(writes(route) ? [] : [{ module: 'shared/pets-repository.ts', why: 'its route only reads (its table access)' }]),
    // The key administration is the key tool's; no operation reads keys.
    { module: 'shared/api-keys-repository.ts', why: 'no operation administers keys' },
  ],
});

/** Every request-path bundle's budget: each operation with a function, in the route table's order, then the authorizer. */
export const requestPathBudgets = (): BundleBudget[] => [
  ...routes.flatMap((route: Route) =>
    'handler' in route && route.handler !== undefined ? [operationBudget({ ...route, handler: route.handler })] : [],
  ),
  {
    name: 'authorizer',
    entry: AUTHORIZER_ENTRY,
    maxBytes: AUTHORIZER_BUNDLE_BYTES,
    importRatio: AUTHORIZER_IMPORT_RATIO,
    excludes: [
      ...REQUEST_PATH_EXCLUDES,
      // shared/routes.ts names its models rather than holds them, for this.
      { module: 'zod', why: 'the route table names its models, so that the authorizer stays without zod' },
      { module: 'shared/api-keys-repository.ts', why: 'it reads keys through shared/key-reads.ts, not the key administration' },
      { module: 'shared/pets-repository.ts', why: 'it reads no pet' },
    ],
  },
];
