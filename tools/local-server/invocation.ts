/**
 * Which function the local server is running, as Lambda knows it: each function runs with a role
 * of its own when deployed, so a call one of them makes is that function's call. The tests read
 * it to check each AWS call against that function's role in the synthesized template.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { TableNames } from '../../shared/tables';

export interface Invocation {
  /** The function's name in the stack: an operationId, `authorizer`, `keyAudit` or `keyExpiry`. */
  readonly functionName: string;
  /** The tables its calls go to, by what each is: a call to any other table is the local emulation's own. */
  readonly tables: Partial<TableNames>;
}

export const currentInvocation = new AsyncLocalStorage<Invocation>();

/** The same function, run as an invocation of `functionName`. */
export const asInvocation =
  <Args extends unknown[], Result>(invocation: Invocation, run: (...args: Args) => Promise<Result>) =>
  (...args: Args): Promise<Result> =>
    currentInvocation.run(invocation, () => run(...args));
