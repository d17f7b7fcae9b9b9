/** What a function may do on one DynamoDB table or index: the stack turns each grant into one IAM statement. */
import type { RequestHeader } from './routes';
import type { TableNames } from './tables';

/** The values of `ReturnValues` a write may ask for (DynamoDB's own). */
export type ReturnValues = 'NONE' | 'ALL_OLD' | 'UPDATED_OLD' | 'ALL_NEW' | 'UPDATED_NEW';

export interface TableAccess {
  readonly table: keyof TableNames;
  /** An index of that table; absent for the table itself. */
  readonly index?: string;
  readonly actions: readonly string[];
  /**
   * The only attributes these actions may read or write, the key attribute included (IAM's
   * fine-grained access: `dynamodb:Attributes`); every attribute when absent. IAM names every
   * attribute a request names, those its condition reads too, and cannot tell a read from a write.
   */
  readonly attributes?: readonly string[];
  /**
   * The only `ReturnValues` a write may ask for (`dynamodb:ReturnValues`); any when absent. With
   * `attributes`, NONE alone: ALL_OLD or ALL_NEW would return the attributes not named.
   */
  readonly returnValues?: readonly ReturnValues[];
  /**
   * The request header without which an operation never uses this grant (a keyed create's writes
   * of its reservation and record): a request without it, such as the route's example, sends none
   * of these actions. Absent: any request of the operation may.
   */
  readonly onlyWith?: RequestHeader;
}
