/**
 * The rows of the fault matrix (test/e2e/faults.test.ts), from the route table: each grant of each
 * operation with a function, faulted under the operation's example request
 * (shared/request-examples.ts). A request that names a resource (its route's `succeedsWith`, in its
 * path or body) gets a fresh one each time, made before the fault is injected: the operation may
 * consume it (a delete), and the next request of the row must not find it gone.
 */
import { queryUsing, succeedingRequest, type ExampleRequest, type ResourceMaker } from '../../shared/request-examples';
import type { Route } from '../../shared/routes';
import type { TableAccess } from '../../shared/table-access';
import { statusShardCount } from '../../shared/config';
import { tableDefinitions, type TableNames } from '../../shared/tables';

export interface FaultRow {
  readonly operationId: string;
  /** The operation, with the query that makes it use the grant. */
  readonly name: string;
  /** The DynamoDB call to fault, without `dynamodb:`; `table` picks the table. */
  readonly operation: string;
  readonly table: keyof TableNames;
  /** The status of the request's success. */
  readonly success: number;
  /** The calls of `operation` one request makes: one, or one per shard of a sharded index, sent together. */
  readonly callsPerRequest: number;
  /** The row's next request, with each resource it names made afresh by `make` (its route's `succeedsWith`). */
  request(make: ResourceMaker): Promise<ExampleRequest>;
}

/**
 * A grant used only with a request header (its route's `onlyWith`: a keyed create's writes) is not
 * reached by the example request, which sends none: test/e2e/idempotency.test.ts faults those.
 */
const reachedByPlainRequests = (grant: TableAccess) => grant.onlyWith === undefined;

/** A listing on a sharded index queries each shard (shared/pets-repository.ts); any other grant is one call. */
const callsOf = (grant: TableAccess): number => {
  const index = tableDefinitions[grant.table].globalSecondaryIndexes.find(({ indexName }) => indexName === grant.index);
  return index !== undefined && 'listedBy' in index ? statusShardCount() : 1;
};

export const faultRows = (routes: readonly Route[]): FaultRow[] =>
  routes.flatMap((route) =>
    route.handler === undefined || route.success === undefined
      ? []
      : (route.tableAccess ?? []).filter(reachedByPlainRequests).flatMap((grant) =>
          grant.actions.map((action) => {
            const query = queryUsing(route, grant);
            const search = new URLSearchParams(query).toString();
            return {
              operationId: route.operationId,
              name: `${route.operationId}${search === '' ? '' : `?${search}`}`,
              operation: action.replace(/^dynamodb:/, ''),
              table: grant.table,
              success: route.success?.status ?? 200,
              callsPerRequest: callsOf(grant),
              request: (make: ResourceMaker) => succeedingRequest(route, make, { query }),
            };
          }),
        ),
  );
