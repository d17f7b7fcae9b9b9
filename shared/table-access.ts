/** What a function may do on one DynamoDB table or index: the stack turns each grant into one IAM statement. */
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
   * fine-grained access: `dynamodb:Attributes`); every attribute when absent.
   */
  readonly attributes?: readonly string[];
  /**
   * Those of `attributes` an update's condition reads and nothing writes. IAM names every attribute
   * a request names, in its condition too, so the grant must allow them and cannot tell a read
   * from a write: the code is held to reading them by test/integration/permissions.test.ts.
   */
  readonly readByConditionOnly?: readonly string[];
  /**
   * The only `ReturnValues` a write may ask for (`dynamodb:ReturnValues`); any when absent. With
   * `attributes`, NONE alone: ALL_OLD or ALL_NEW would return the attributes not named.
   */
  readonly returnValues?: readonly ReturnValues[];
}
