/**
 * The pre-traffic hook's checks against the real handlers on DynamoDB Local: `invoke` calls the
 * handler module a version ARN stands for, as Lambda would run that version. CodeDeploy's side
 * (PutLifecycleEventHookExecutionStatus) is a mocked client (aws-sdk-client-mock), which records
 * what the hook reports.
 */
import { CodeDeployClient, PutLifecycleEventHookExecutionStatusCommand } from '@aws-sdk/client-codedeploy';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler as createCreatePet } from '../../functions/create-pet';
import { createHandler as createGetPet } from '../../functions/get-pet';
import { createHandler as createListPets } from '../../functions/list-pets';
import { codeDeployReport, createHandler as createHook, type LifecycleHookEvent } from '../../functions/pre-traffic-hook';
import { logger } from '../../shared/logger';
import { petsRepository, type PetsRepository } from '../../shared/pets-repository';
import { VERSION_ARN_VARIABLES, type CheckedOperation, type Invoke } from '../../shared/release-checks';
import { context } from '../support/events';
import { createTestTables, type TestTables } from '../support/tables';

type Handler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

const versionArn = (operation: CheckedOperation) => `arn:aws:lambda:eu-west-1:123456789012:function:pet-store-test-${operation}:7`;
const env = Object.fromEntries(
  Object.entries(VERSION_ARN_VARIABLES).map(([operation, variable]) => [variable, versionArn(operation as CheckedOperation)]),
);
const lifecycleEvent: LifecycleHookEvent = { DeploymentId: 'd-ABCDEF123', LifecycleEventHookExecutionId: 'hook-execution-1' };

let tables: TestTables;
let pets: PetsRepository;
const codeDeploy = mockClient(CodeDeployClient);

beforeAll(async () => {
  tables = await createTestTables();
  pets = petsRepository({ client: tables.client, tableName: tables.pets });
  await pets.create({ name: 'Rex', categoryId: 1, status: 'available' });
  await pets.create({ name: 'Tom', categoryId: 2, status: 'sold' });
});

afterEach(() => {
  codeDeploy.reset();
  vi.restoreAllMocks();
});

/** The real handlers on the test tables, by the version ARN the hook is given for each. */
const realHandlers = (): Record<CheckedOperation, Handler> => ({
  listPets: (event) => createListPets({ pets })(event, context),
  getPet: (event) => createGetPet({ pets })(event, context),
  createPet: (event) => createCreatePet({ pets })(event, context),
});

const invokeOf =
  (handlers: Record<CheckedOperation, Handler>): Invoke =>
  async (functionArn, event) => {
    const operation = (Object.keys(VERSION_ARN_VARIABLES) as CheckedOperation[]).find((candidate) => versionArn(candidate) === functionArn);
    if (!operation) throw new Error(`no handler for ${functionArn}`);
    return handlers[operation](event);
  };

/** Runs the hook with these handlers; returns what it reported and the lines it logged. */
const runHook = async (handlers: Record<CheckedOperation, Handler>, invoke: Invoke = invokeOf(handlers)) => {
  codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
  const info = vi.spyOn(logger, 'info');
  const error = vi.spyOn(logger, 'error');
  const hook = createHook({ invoke, report: codeDeployReport(new CodeDeployClient({ region: 'eu-west-1' })), env });
  const result = await hook(lifecycleEvent);
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

    expect(result).toEqual({ status: 'Succeeded' });
    expect(reported).toEqual(reportedAs('Succeeded'));
    const passed = lines.filter(({ message }) => message === 'release check passed').map(({ check }) => check);
    expect(passed).toEqual([
      'listPets GET /pets?limit=1 answers 200 with at most one pet',
      'getPet GET /pets/9007199254740991 answers 404 not_found',
      'createPet POST /pets without a name answers 400 validation_failed',
    ]);
  });

  it('writes nothing: the create it sends is refused before any write', async () => {
    const before = await pets.list({ limit: 100 });
    await runHook(realHandlers());
    expect(await pets.list({ limit: 100 })).toEqual(before);
  });

  it.each<[string, Partial<Record<CheckedOperation, Handler>>, RegExp, RegExp]>([
    ['a listing answered 500', { listPets: async () => ({ statusCode: 500, body: '{}' }) }, /^listPets/, /answered 500, expected 200/],
    [
      'a listing that is an object, not an array',
      { listPets: async () => ({ statusCode: 200, body: JSON.stringify({ pets: [] }) }) },
      /^listPets/,
      /not a list of at most one pet/,
    ],
    [
      'a listing of more than the one pet asked for',
      { listPets: async (event) => createListPets({ pets })({ ...event, multiValueQueryStringParameters: { limit: ['2'] } }, context) },
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
  ])('reports Failed for %s, and the line names the check', async (_case, broken, check, problem) => {
    const { result, reported, failed } = await runHook({ ...realHandlers(), ...broken });

    expect(result).toEqual({ status: 'Failed' });
    expect(reported).toEqual(reportedAs('Failed'));
    expect(failed).toHaveLength(1);
    expect(failed[0]?.check).toMatch(check);
    expect(failed[0]?.problem).toMatch(problem);
  });

  it('reports Failed when an invocation throws, naming only the kind of error', async () => {
    const handlers = realHandlers();
    const invoke: Invoke = async (functionArn, event) => {
      if (functionArn === versionArn('getPet'))
        throw Object.assign(new Error(`User is not authorized to invoke ${functionArn}`), { name: 'AccessDeniedException' });
      return invokeOf(handlers)(functionArn, event);
    };
    const { result, reported, failed } = await runHook(handlers, invoke);

    expect(result).toEqual({ status: 'Failed' });
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
    expect(await hook(lifecycleEvent)).toEqual({ status: 'Failed' });
    expect(codeDeploy.commandCalls(PutLifecycleEventHookExecutionStatusCommand).map((call) => call.args[0].input.status)).toEqual([
      'Failed',
    ]);
  });

  it('expects 410 gone from the unknown-id get once the operation is past its sunset', async () => {
    codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
    const afterSunset = () => new Date('2031-01-01T00:00:00Z');
    const handlers: Record<CheckedOperation, Handler> = {
      ...realHandlers(),
      getPet: (event) => createGetPet({ pets, now: afterSunset })(event, context),
    };
    const hook = createHook({
      invoke: invokeOf(handlers),
      report: codeDeployReport(new CodeDeployClient({ region: 'eu-west-1' })),
      env,
      now: afterSunset,
    });
    expect(await hook(lifecycleEvent)).toEqual({ status: 'Succeeded' });
  });
});
