/**
 * The pre-traffic hook's checks against the real handlers and the real authorizer on DynamoDB
 * Local: `invoke` calls the handler module a version ARN stands for, as Lambda would run that
 * version (an error the handler throws is a function error, as Lambda reports it). CodeDeploy's
 * side (PutLifecycleEventHookExecutionStatus) is a mocked client (aws-sdk-client-mock), which
 * records what the hook reports.
 */
import { CodeDeployClient, PutLifecycleEventHookExecutionStatusCommand } from '@aws-sdk/client-codedeploy';
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler as createAuthorizer } from '../../functions/authorizer';
import { createHandler as createCreatePet } from '../../functions/create-pet';
import { createHandler as createGetPet } from '../../functions/get-pet';
import { createHandler as createListPets } from '../../functions/list-pets';
import { codeDeployReport, createHandler as createHook, REPORT_MARGIN_MS, type LifecycleHookEvent } from '../../functions/pre-traffic-hook';
import { looksLikeApiKey } from '../../shared/api-keys';
import { apiKeysRepository, type ApiKeysRepository } from '../../shared/api-keys-repository';
import { logger } from '../../shared/logger';
import { petsRepository, type PetsRepository } from '../../shared/pets-repository';
import { VERSION_ARN_VARIABLES, type CheckedFunction, type CheckEvent, type Invoke } from '../../shared/release-checks';
import { PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS } from '../../shared/stack';
import { context } from '../support/events';
import { recordingClient, type SentCommand } from '../support/recording-client';
import { createTestTables, type TestTables } from '../support/tables';

/** A handler as Lambda runs it: the event in, its answer out, or an error thrown. */
type Handler = (event: CheckEvent) => Promise<unknown>;

const versionArn = (name: CheckedFunction) => `arn:aws:lambda:eu-west-1:123456789012:function:pet-store-test-${name}:7`;
const env = Object.fromEntries(
  Object.entries(VERSION_ARN_VARIABLES).map(([name, variable]) => [variable, versionArn(name as CheckedFunction)]),
);
const lifecycleEvent: LifecycleHookEvent = { DeploymentId: 'd-ABCDEF123', LifecycleEventHookExecutionId: 'hook-execution-1' };
/** The hook's Lambda context: the whole of its timeout left. */
const hookContext = { getRemainingTimeInMillis: () => PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS * 1000 };

let tables: TestTables;
let pets: PetsRepository;
let keys: ApiKeysRepository;
/** Every command the authorizer sends the keys table. */
let keysCommands: SentCommand[];
const codeDeploy = mockClient(CodeDeployClient);

beforeAll(async () => {
  tables = await createTestTables();
  pets = petsRepository({ client: tables.client, tableName: tables.pets });
  const recording = recordingClient(tables.endpoint);
  keys = apiKeysRepository({ client: recording.client, tableName: tables.apiKeys });
  keysCommands = recording.sent;
  await pets.create({ name: 'Rex', categoryId: 1, status: 'available' });
  await pets.create({ name: 'Tom', categoryId: 2, status: 'sold' });
});

afterEach(() => {
  codeDeploy.reset();
  vi.restoreAllMocks();
});

/** The real handlers and authorizer on the test tables, by the version ARN the hook is given for each. */
const realHandlers = (): Record<CheckedFunction, Handler> => ({
  listPets: (event) => createListPets({ pets })(event as APIGatewayProxyEvent, context),
  getPet: (event) => createGetPet({ pets })(event as APIGatewayProxyEvent, context),
  createPet: (event) => createCreatePet({ pets })(event as APIGatewayProxyEvent, context),
  authorizer: (event) => createAuthorizer({ keys })(event as APIGatewayTokenAuthorizerEvent, context),
});

/** Lambda's side of an invocation: the answer as JSON would carry it, or the error thrown, by its type and message. */
const invokeOf =
  (handlers: Record<CheckedFunction, Handler>): Invoke =>
  async (functionArn, event) => {
    const name = (Object.keys(VERSION_ARN_VARIABLES) as CheckedFunction[]).find((candidate) => versionArn(candidate) === functionArn);
    if (!name) throw new Error(`no handler for ${functionArn}`);
    try {
      return { answer: JSON.parse(JSON.stringify(await handlers[name](event))) as unknown };
    } catch (error) {
      const { name: errorType, message: errorMessage } = error instanceof Error ? error : new Error(String(error));
      return { functionError: { errorType, errorMessage } };
    }
  };

/** Runs the hook with these handlers; returns what it reported and the lines it logged. */
const runHook = async (handlers: Record<CheckedFunction, Handler>, invoke: Invoke = invokeOf(handlers)) => {
  codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
  const info = vi.spyOn(logger, 'info');
  const error = vi.spyOn(logger, 'error');
  const hook = createHook({ invoke, report: codeDeployReport(new CodeDeployClient({ region: 'eu-west-1' })), env });
  const result = await hook(lifecycleEvent, hookContext);
  const reported = codeDeploy.commandCalls(PutLifecycleEventHookExecutionStatusCommand).map((call) => call.args[0].input);
  const lines = [...info.mock.calls, ...error.mock.calls].map(([message, fields]) => ({ message, ...(fields as { check?: string }) }));
  return { result, reported, lines, failed: error.mock.calls.map(([, fields]) => fields as { check: string; problem: string }) };
};

const reportedAs = (status: 'Succeeded' | 'Failed') => [
  { deploymentId: lifecycleEvent.DeploymentId, lifecycleEventHookExecutionId: lifecycleEvent.LifecycleEventHookExecutionId, status },
];

describe('the pre-traffic hook on the real handlers', () => {
  it('reports Succeeded when every answer is right, with one line per check', async () => {
    const { result, reported, lines } = await runHook(realHandlers());

    expect(result).toEqual({ status: 'Succeeded', reported: true });
    expect(reported).toEqual(reportedAs('Succeeded'));
    const passed = lines.filter(({ message }) => message === 'release check passed').map(({ check }) => check);
    expect(passed).toEqual([
      'listPets GET /pets?limit=1 answers 200 with at most one pet',
      'getPet GET /pets/9007199254740991 answers 404 not_found',
      'createPet POST /pets without a name answers 400 validation_failed',
      'authorizer refuses an unknown key with Unauthorized',
    ]);
  });

  it('writes nothing: the create it sends is refused before any write, and the authorizer only reads one key', async () => {
    const before = await pets.list({ limit: 100 });
    keysCommands.length = 0;
    await runHook(realHandlers());
    expect(await pets.list({ limit: 100 })).toEqual(before);
    expect(keysCommands).toEqual([expect.objectContaining({ command: 'GetItem', tableName: tables.apiKeys })]);
  });

  it('sends the authorizer a key of the form generated keys have, so that it reads the keys table', async () => {
    const tokens: string[] = [];
    const authorizer = realHandlers().authorizer;
    await runHook({
      ...realHandlers(),
      authorizer: (event) => {
        tokens.push((event as APIGatewayTokenAuthorizerEvent).authorizationToken);
        return authorizer(event);
      },
    });
    expect(tokens).toHaveLength(1);
    expect(tokens[0]).toMatch(/^Bearer /);
    expect(looksLikeApiKey(tokens[0]!.slice('Bearer '.length))).toBe(true);
  });

  it.each<[string, Partial<Record<CheckedFunction, Handler>>, RegExp, RegExp]>([
    ['a listing answered 500', { listPets: async () => ({ statusCode: 500, body: '{}' }) }, /^listPets/, /answered 500, expected 200/],
    [
      'a listing that is an object, not an array',
      { listPets: async () => ({ statusCode: 200, body: JSON.stringify({ pets: [] }) }) },
      /^listPets/,
      /not a list of at most one pet/,
    ],
    [
      'a listing of more than the one pet asked for',
      {
        listPets: async (event) =>
          createListPets({ pets })({ ...(event as APIGatewayProxyEvent), multiValueQueryStringParameters: { limit: ['2'] } }, context),
      },
      /^listPets/,
      /not a list of at most one pet/,
    ],
    [
      'a 200 for the id no pet has',
      { getPet: async () => ({ statusCode: 200, body: JSON.stringify({ id: 1, name: 'Rex', categoryId: 1, status: 'available' }) }) },
      /^getPet/,
      /answered 200, expected 404/,
    ],
    ['a 404 not in the Error shape', { getPet: async () => ({ statusCode: 404, body: 'Not Found' }) }, /^getPet/, /not the Error shape/],
    [
      'a create that accepts a pet without a name',
      { createPet: async () => ({ statusCode: 201, body: '{}' }) },
      /^createPet/,
      /answered 201, expected 400/,
    ],
    [
      'a listing that crashes',
      {
        listPets: async () => {
          throw new TypeError('Cannot read properties of undefined');
        },
      },
      /^listPets/,
      /^failed with the error TypeError$/,
    ],
    [
      'an authorizer that allows an unknown key',
      {
        authorizer: async () => ({
          principalId: 'anyone',
          policyDocument: { Version: '2012-10-17', Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: '*' }] },
        }),
      },
      /^authorizer/,
      /answered a policy, expected the error Unauthorized/,
    ],
    [
      'an authorizer that fails with another error',
      {
        authorizer: async () => {
          throw Object.assign(new Error('keys table pet-store-prod-ApiKeys unreadable'), { name: 'DatabaseUnavailable' });
        },
      },
      /^authorizer/,
      /^failed with another error \(DatabaseUnavailable\), expected Unauthorized$/,
    ],
  ])('reports Failed for %s, and the line names the check', async (_case, broken, check, problem) => {
    const { result, reported, failed } = await runHook({ ...realHandlers(), ...broken });

    expect(result).toEqual({ status: 'Failed', reported: true });
    expect(reported).toEqual(reportedAs('Failed'));
    expect(failed).toHaveLength(1);
    expect(failed[0]?.check).toMatch(check);
    expect(failed[0]?.problem).toMatch(problem);
  });

  it('reports Failed when an invocation throws, naming only the kind of error', async () => {
    const handlers = realHandlers();
    const invoke: Invoke = async (functionArn, event, signal) => {
      if (functionArn === versionArn('getPet'))
        throw Object.assign(new Error(`User is not authorized to invoke ${functionArn}`), { name: 'AccessDeniedException' });
      return invokeOf(handlers)(functionArn, event, signal);
    };
    const { result, reported, failed } = await runHook(handlers, invoke);

    expect(result).toEqual({ status: 'Failed', reported: true });
    expect(reported).toEqual(reportedAs('Failed'));
    expect(failed).toEqual([{ check: expect.stringMatching(/^getPet/), problem: 'the invocation failed (AccessDeniedException)' }]);
  });

  it('reports Failed when it is not told a version to check', async () => {
    codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
    const hook = createHook({
      invoke: invokeOf(realHandlers()),
      report: codeDeployReport(new CodeDeployClient({ region: 'eu-west-1' })),
      env: {},
    });
    expect(await hook(lifecycleEvent, hookContext)).toEqual({ status: 'Failed', reported: true });
    expect(codeDeploy.commandCalls(PutLifecycleEventHookExecutionStatusCommand).map((call) => call.args[0].input.status)).toEqual([
      'Failed',
    ]);
  });

  it('expects 410 gone from the unknown-id get once the operation is past its sunset', async () => {
    codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
    const afterSunset = () => new Date('2031-01-01T00:00:00Z');
    const handlers: Record<CheckedFunction, Handler> = {
      ...realHandlers(),
      getPet: (event) => createGetPet({ pets, now: afterSunset })(event as APIGatewayProxyEvent, context),
    };
    const hook = createHook({
      invoke: invokeOf(handlers),
      report: codeDeployReport(new CodeDeployClient({ region: 'eu-west-1' })),
      env,
      now: afterSunset,
    });
    expect(await hook(lifecycleEvent, hookContext)).toEqual({ status: 'Succeeded', reported: true });
  });
});
