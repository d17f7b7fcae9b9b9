/**
 * What a version must answer before it takes traffic: the pre-traffic hook
 * (functions/pre-traffic-hook.ts) sends the version a deployment shifts a function's alias to the
 * events API Gateway would send, and each check says what is wrong with the outcome, if anything. Nothing here talks
 * to AWS: the caller says how to invoke, so the same checks run against the local handlers in the
 * tests.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { z } from 'zod';
import { generateApiKey } from './api-keys';
import { AUTHORIZER_REFUSAL } from './auth-policy';
import type { ErrorCode } from './errors';
import { methodArn, proxyEvent, tokenEvent } from './gateway-events';
import { ApiErrorBody, Health, MAX_SAFE_ID, Pet } from './models';
import { routeOf, routes, type HandledOperationId, type OperationId, type Route } from './routes';

/** What a check sends: the event API Gateway would send the function (a proxy request, or a TOKEN authorization). */
export type CheckEvent = APIGatewayProxyEvent | APIGatewayTokenAuthorizerEvent;

/** The error a function ended with, as Lambda reports it (FunctionError, and the payload's type and message). */
export interface FunctionError {
  readonly errorType: string;
  readonly errorMessage: string;
}

/** How an invocation ended: the function's answer (its payload, parsed), or the error it ended with. */
export type Invocation = { readonly answer: unknown } | { readonly functionError: FunctionError };

/**
 * Sends a function (a version: `<name or ARN>:<version>`) an event and says how the invocation
 * ended; throws when it could not be made (denied, throttled, aborted by `signal` at the check's
 * deadline).
 */
export type Invoke = (version: string, event: CheckEvent, signal: AbortSignal) => Promise<Invocation>;

/**
 * The functions whose versions are checked: every operation of the route table that has a
 * handler, and the authorizer, which are what a release releases. Each must have a check below
 * and a variable: a new operation does not compile until it has both.
 */
export type CheckedFunction = HandledOperationId | 'authorizer';

/**
 * Why the operations without a handler have no check: no function serves them, so a release
 * releases no version of theirs. Keyed by operation, so that a new route without a handler does
 * not compile until it says why it goes unchecked (one with a handler needs a check instead).
 */
export const UNCHECKED_OPERATIONS: Readonly<Record<Exclude<OperationId, HandledOperationId>, string>> = {
  listStoreOrders: 'not implemented: API Gateway answers it 501 itself (a mock integration), with no function to release',
};

/** `updatePetStatus` → `UPDATE_PET_STATUS_FUNCTION_NAME`: a function's variable, by its name. */
const functionNameVariable = (name: CheckedFunction): string =>
  `${name.replace(/[A-Z]/g, (letter) => `_${letter}`).toUpperCase()}_FUNCTION_NAME`;

/**
 * The environment variable that holds each checked function's name: how the hook knows which
 * checks a deployment's function gets. Names, never versions: the version comes from the
 * deployment itself, so a release changes nothing of the hook's. One per operation with a handler,
 * in the route table's order, then the authorizer's.
 */
export const FUNCTION_NAME_VARIABLES: Readonly<Record<CheckedFunction, string>> = Object.fromEntries(
  [...routes.flatMap((route: Route) => ('handler' in route ? [route.operationId as HandledOperationId] : [])), 'authorizer' as const].map(
    (name) => [name, functionNameVariable(name)],
  ),
) as Record<CheckedFunction, string>;

/**
 * Pairs each released function (by operationId, or `authorizer`) with its check's name, and
 * throws when a released function has no check, or a check no released function: a version the
 * hook did not try must never take traffic, and a check with nothing to try is a wiring mistake.
 */
export const checkedFunctions = <F>(released: ReadonlyMap<string, F>): Array<readonly [CheckedFunction, F]> => {
  const isChecked = (name: string): name is CheckedFunction => Object.hasOwn(FUNCTION_NAME_VARIABLES, name);
  const unchecked = [...released.keys()].filter((name) => !isChecked(name));
  if (unchecked.length > 0) throw new Error(`No pre-traffic check for the released function(s) ${unchecked.join(', ')}.`);
  return (Object.keys(FUNCTION_NAME_VARIABLES) as CheckedFunction[]).map((name) => {
    const fn = released.get(name);
    if (fn === undefined) throw new Error(`No ${name} function for the pre-traffic hook to check.`);
    return [name, fn] as const;
  });
};

export interface ReleaseCheck {
  /** Names the check in the hook's log line: what it sends and what it expects. */
  readonly name: string;
  readonly target: CheckedFunction;
  readonly event: CheckEvent;
  /** What is wrong with how the invocation ended; undefined when it is right. */
  readonly problemWith: (invocation: Invocation) => string | undefined;
}

export interface CheckResult {
  readonly check: string;
  readonly passed: boolean;
  /** Why it failed: a wrong answer, or an invocation that failed or ran out of time. */
  readonly problem?: string;
}

/** An id no pet has: the largest the API accepts, which shared/ids.ts reaches only in 2094. */
const UNKNOWN_PET_ID = String(MAX_SAFE_ID);

/** JSON text parsed, or undefined when it is not JSON: an answer under check is judged, never trusted. */
export const parsedJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

const parsedBody = (answer: APIGatewayProxyResult): unknown =>
  parsedJson(answer.isBase64Encoded ? Buffer.from(answer.body, 'base64').toString('utf8') : answer.body);

const statusProblem = (answer: APIGatewayProxyResult, expected: number): string | undefined =>
  answer.statusCode === expected ? undefined : `answered ${answer.statusCode}, expected ${expected}`;

/** The Error shape with this code, its status the HTTP status. */
const errorProblem = (answer: APIGatewayProxyResult, status: number, code: ErrorCode): string | undefined => {
  const wrongStatus = statusProblem(answer, status);
  if (wrongStatus) return wrongStatus;
  const body = ApiErrorBody.safeParse(parsedBody(answer));
  if (!body.success) return 'answered a body that is not the Error shape';
  if (body.data.code !== code || body.data.status !== status) {
    return `answered the error ${body.data.code} (${body.data.status}), expected ${code} (${status})`;
  }
  return undefined;
};

/** The answer a proxy integration expects of a function (the fields the checks read). */
const ProxyAnswer = z.object({
  statusCode: z.number(),
  body: z.string(),
  headers: z.optional(z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]))),
  isBase64Encoded: z.optional(z.boolean()),
});

/**
 * A check of a proxy answer: a function error, or an answer API Gateway could not use, is a
 * problem named by its kind only (an error's message may quote anything).
 */
const proxyAnswerCheck =
  (problemWithAnswer: (answer: APIGatewayProxyResult) => string | undefined) =>
  (invocation: Invocation): string | undefined => {
    if ('functionError' in invocation) return `failed with the error ${invocation.functionError.errorType}`;
    const answer = ProxyAnswer.safeParse(invocation.answer);
    if (!answer.success) return 'answered something that is not an API Gateway proxy answer';
    return problemWithAnswer(answer.data);
  };

/** A listing of at most one pet, each as the API returns pets. */
const OnePetPage = z.array(Pet).check(z.maxLength(1));

/** The getPet route answers 404 for an unknown id until its sunset, 410 from then on (shared/http/deprecation.ts). */
const unknownPetAnswer = (now: Date): { status: number; code: ErrorCode } => {
  const sunsetAt = routeOf('getPet').deprecated?.sunsetAt;
  return sunsetAt !== undefined && now >= sunsetAt ? { status: 410, code: 'gone' } : { status: 404, code: 'not_found' };
};

/**
 * The checks, each a request a working version answers in one known way, and none writes anything:
 * one per checked function (keyed by it, so that the compiler asks for each).
 */
export const releaseChecks = (now: Date = new Date()): readonly ReleaseCheck[] => {
  const unknownPet = unknownPetAnswer(now);
  const checks: Readonly<Record<CheckedFunction, Omit<ReleaseCheck, 'target'>>> = {
    listPets: {
      name: 'listPets GET /pets?limit=1 answers 200 with at most one pet',
      event: proxyEvent({ method: 'GET', resource: '/pets', query: { limit: '1' } }),
      problemWith: proxyAnswerCheck((answer) => {
        const wrongStatus = statusProblem(answer, 200);
        if (wrongStatus) return wrongStatus;
        return OnePetPage.safeParse(parsedBody(answer)).success ? undefined : 'answered a body that is not a list of at most one pet';
      }),
    },
    getPet: {
      name: `getPet GET /pets/${UNKNOWN_PET_ID} answers ${unknownPet.status} ${unknownPet.code}`,
      event: proxyEvent({
        method: 'GET',
        resource: '/pets/{petId}',
        path: `/pets/${UNKNOWN_PET_ID}`,
        pathParameters: { petId: UNKNOWN_PET_ID },
      }),
      problemWith: proxyAnswerCheck((answer) => errorProblem(answer, unknownPet.status, unknownPet.code)),
    },
    createPet: {
      // Refused before any write: a pet without a name is never stored.
      name: 'createPet POST /pets without a name answers 400 validation_failed',
      event: proxyEvent({
        method: 'POST',
        resource: '/pets',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ categoryId: 1 }),
      }),
      problemWith: proxyAnswerCheck((answer) => errorProblem(answer, 400, 'validation_failed')),
    },
    getHealth: {
      // The new version reads this region's tables (two GetItems of keys no item has) and says so.
      name: 'getHealth GET /health answers 200 {"status":"ok"}',
      event: proxyEvent({ method: 'GET', resource: '/health' }),
      problemWith: proxyAnswerCheck((answer) => {
        const wrongStatus = statusProblem(answer, 200);
        if (wrongStatus) return wrongStatus;
        return Health.safeParse(parsedBody(answer)).success ? undefined : 'answered a body that is not {"status":"ok"}';
      }),
    },
    authorizer: {
      // A key of the right form that no one has (a fresh random one): the new version reads the
      // keys table (one GetItem, no write) and must refuse it. A valid key is out of reach: the
      // hook would need to write one to the keys table.
      name: `authorizer refuses an unknown key with ${AUTHORIZER_REFUSAL}`,
      event: tokenEvent(`Bearer ${generateApiKey()}`, methodArn('GET', '/pets')),
      problemWith: (invocation) => {
        if (!('functionError' in invocation)) return `answered a policy, expected the error ${AUTHORIZER_REFUSAL}`;
        // The message is compared, never logged: only the refusal's is known to hold nothing else.
        return invocation.functionError.errorMessage === AUTHORIZER_REFUSAL
          ? undefined
          : `failed with another error (${invocation.functionError.errorType}), expected ${AUTHORIZER_REFUSAL}`;
      },
    },
  };
  return (Object.entries(checks) as Array<[CheckedFunction, Omit<ReleaseCheck, 'target'>]>).map(([target, check]) => ({
    target,
    ...check,
  }));
};

/** The name of an error, and nothing of its message: an invocation error may quote ARNs or the payload. */
const invocationProblem = (error: unknown): string =>
  `the invocation failed (${error instanceof Error ? error.name : typeof error}${error instanceof InvocationTimedOut ? `: ${error.message}` : ''})`;

/** A call that gave no outcome within its deadline: it is aborted, and given up on. */
export class InvocationTimedOut extends Error {
  constructor(deadlineMs: number) {
    super(`no outcome within ${deadlineMs} ms`);
    this.name = 'InvocationTimedOut';
  }
}

/**
 * Runs a call with a deadline: at `deadlineMs` it is aborted (its signal) and given up on, with
 * InvocationTimedOut, whether or not it heeds the signal, so that the hook always lives to report.
 */
export const withinDeadline = async <T>(call: (signal: AbortSignal) => Promise<T>, deadlineMs: number): Promise<T> => {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => {
      const timedOut = new InvocationTimedOut(deadlineMs);
      controller.abort(timedOut);
      reject(timedOut);
    }, deadlineMs);
  });
  try {
    return await Promise.race([call(controller.signal), deadline]);
  } finally {
    clearTimeout(timer);
  }
};

/**
 * Runs the checks against a version (`<name or ARN>:<version>`), all at once, each within
 * `deadlineMs`, and never throws: a check whose invocation throws or runs out of time has failed.
 */
export const runReleaseChecks = async (
  checks: readonly ReleaseCheck[],
  version: string,
  invoke: Invoke,
  deadlineMs: number,
): Promise<CheckResult[]> =>
  Promise.all(
    checks.map(async ({ name, event, problemWith }): Promise<CheckResult> => {
      let problem: string | undefined;
      try {
        problem = problemWith(await withinDeadline((signal) => invoke(version, event, signal), deadlineMs));
      } catch (error) {
        problem = invocationProblem(error);
      }
      return problem === undefined ? { check: name, passed: true } : { check: name, passed: false, problem };
    }),
  );
