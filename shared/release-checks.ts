/**
 * What a new version must answer before it takes traffic: the pre-traffic hook
 * (functions/pre-traffic-hook.ts) sends each operation's new version the event API Gateway would
 * send, and each check says what is wrong with the answer, if anything. Nothing here talks to AWS:
 * the caller says how to invoke, so the same checks run against the local handlers in the tests.
 */
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { z } from 'zod';
import type { ErrorCode } from './errors';
import { proxyEvent } from './gateway-events';
import { ApiErrorBody, MAX_SAFE_ID, Pet } from './models';
import { routeOf } from './routes';

/** Sends a function (a version's ARN) an API Gateway event and returns its answer; throws when the invocation fails. */
export type Invoke = (functionArn: string, event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/** The operations whose new versions are checked: each has a check below. */
export type CheckedOperation = 'listPets' | 'getPet' | 'createPet';

/**
 * The environment variable that holds each checked operation's new version ARN. The stack sets
 * them to each function's current version, so every deploy that publishes one updates the hook.
 */
export const VERSION_ARN_VARIABLES: Readonly<Record<CheckedOperation, string>> = {
  listPets: 'LIST_PETS_VERSION_ARN',
  getPet: 'GET_PET_VERSION_ARN',
  createPet: 'CREATE_PET_VERSION_ARN',
};

export interface ReleaseCheck {
  /** Names the check in the hook's log line: what it sends and what it expects. */
  readonly name: string;
  readonly operation: CheckedOperation;
  readonly event: APIGatewayProxyEvent;
  /** What is wrong with the answer; undefined when it is right. */
  readonly problemWith: (answer: APIGatewayProxyResult) => string | undefined;
}

export interface CheckResult {
  readonly check: string;
  readonly passed: boolean;
  /** Why it failed: a wrong answer, an invocation that failed, or no version to invoke. */
  readonly problem?: string;
}

/** An id no pet has: the largest the API accepts, which shared/ids.ts reaches only in 2094. */
const UNKNOWN_PET_ID = String(MAX_SAFE_ID);

const parsedBody = (answer: APIGatewayProxyResult): unknown => {
  const text = answer.isBase64Encoded ? Buffer.from(answer.body, 'base64').toString('utf8') : answer.body;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
};

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

/** A listing of at most one pet, each as the API returns pets. */
const OnePetPage = z.array(Pet).check(z.maxLength(1));

/** The getPet route answers 404 for an unknown id until its sunset, 410 from then on (shared/http/deprecation.ts). */
const unknownPetAnswer = (now: Date): { status: number; code: ErrorCode } => {
  const sunsetAt = routeOf('getPet').deprecated?.sunsetAt;
  return sunsetAt !== undefined && now >= sunsetAt ? { status: 410, code: 'gone' } : { status: 404, code: 'not_found' };
};

/** The checks, each a request a working version answers in one known way, and none writes anything. */
export const releaseChecks = (now: Date = new Date()): readonly ReleaseCheck[] => {
  const unknownPet = unknownPetAnswer(now);
  return [
    {
      name: 'listPets GET /pets?limit=1 answers 200 with at most one pet',
      operation: 'listPets',
      event: proxyEvent({ method: 'GET', resource: '/pets', query: { limit: '1' } }),
      problemWith: (answer) => {
        const wrongStatus = statusProblem(answer, 200);
        if (wrongStatus) return wrongStatus;
        return OnePetPage.safeParse(parsedBody(answer)).success ? undefined : 'answered a body that is not a list of at most one pet';
      },
    },
    {
      name: `getPet GET /pets/${UNKNOWN_PET_ID} answers ${unknownPet.status} ${unknownPet.code}`,
      operation: 'getPet',
      event: proxyEvent({
        method: 'GET',
        resource: '/pets/{petId}',
        path: `/pets/${UNKNOWN_PET_ID}`,
        pathParameters: { petId: UNKNOWN_PET_ID },
      }),
      problemWith: (answer) => errorProblem(answer, unknownPet.status, unknownPet.code),
    },
    {
      // Refused before any write: a pet without a name is never stored.
      name: 'createPet POST /pets without a name answers 400 validation_failed',
      operation: 'createPet',
      event: proxyEvent({
        method: 'POST',
        resource: '/pets',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ categoryId: 1 }),
      }),
      problemWith: (answer) => errorProblem(answer, 400, 'validation_failed'),
    },
  ];
};

/** The name of an error, and nothing of its message: an invocation error may quote ARNs or the payload. */
const invocationProblem = (error: unknown): string =>
  `the invocation failed (${error instanceof Error ? error.name : typeof error}${error instanceof InvocationFailed ? `: ${error.message}` : ''})`;

/** What the AWS invoke path throws for an invocation that ran but did not answer as API Gateway expects. */
export class InvocationFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvocationFailed';
  }
}

/**
 * Runs every check against the version ARNs given (by operation), all at once, and never throws:
 * a check whose version is missing, or whose invocation throws, has failed.
 */
export const runReleaseChecks = async (
  checks: readonly ReleaseCheck[],
  versionArns: Readonly<Partial<Record<CheckedOperation, string>>>,
  invoke: Invoke,
): Promise<CheckResult[]> =>
  Promise.all(
    checks.map(async ({ name, operation, event, problemWith }): Promise<CheckResult> => {
      const functionArn = versionArns[operation];
      if (!functionArn)
        return { check: name, passed: false, problem: `no version to invoke (${VERSION_ARN_VARIABLES[operation]} is not set)` };
      let problem: string | undefined;
      try {
        problem = problemWith(await invoke(functionArn, event));
      } catch (error) {
        problem = invocationProblem(error);
      }
      return problem === undefined ? { check: name, passed: true } : { check: name, passed: false, problem };
    }),
  );
