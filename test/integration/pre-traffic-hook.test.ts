/**
 * The pre-traffic hook's checks against the real handlers and the real authorizer on DynamoDB
 * Local, one deployment per released function as CodeDeploy runs them: `invoke` calls the handler
 * module a version (`<function name>:<number>`) stands for, as Lambda would run that version (an
 * error the handler throws is a function error, as Lambda reports it). CodeDeploy's side (the
 * deployment's AppSpec, PutLifecycleEventHookExecutionStatus) is a mocked client
 * (aws-sdk-client-mock), which records what the hook reports.
 */
import { CodeDeployClient, PutLifecycleEventHookExecutionStatusCommand } from '@aws-sdk/client-codedeploy';
import type { APIGatewayProxyEvent, APIGatewayTokenAuthorizerEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHandler as createAuthorizer } from '../../functions/authorizer';
import { createHandler as createGetPet } from '../../functions/get-pet';
import { createHandler as createListPets } from '../../functions/list-pets';
import { createHandler as createHook, type HookResult } from '../../functions/pre-traffic-hook';
import { looksLikeApiKey } from '../../shared/api-keys';
import { apiKeysRepository, type ApiKeysRepository } from '../../shared/api-keys-repository';
import type { Environment } from '../../shared/config';
import { logger } from '../../shared/logger';
import { databaseHealth } from '../../shared/database-health';
import type { PetsRepository } from '../../shared/pets-repository';
import { repositoriesFor, type Repositories } from '../../shared/repositories';
import { FUNCTION_NAME_VARIABLES, releaseChecks, type CheckedFunction, type CheckEvent, type Invoke } from '../../shared/release-checks';
import { PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS } from '../../shared/stack';
import { loadHandlerFactories } from '../../tools/local-server/handler-modules';
import { appSpecJson, mockDeployment } from '../support/code-deploy';
import { context } from '../support/events';
import { byHandledOperation } from '../support/operations';
import { recordingClient, type SentCommand } from '../support/recording-client';
import { createTestTables, type TestTables } from '../support/tables';

/** A handler as Lambda runs it: the event in, its answer out, or an error thrown. */
type Handler = (event: CheckEvent) => Promise<unknown>;
type Handlers = Record<CheckedFunction, Handler>;

const released = Object.keys(FUNCTION_NAME_VARIABLES) as CheckedFunction[];
const functionName = (name: CheckedFunction) => `pet-store-test-${name}`;
const env = Object.fromEntries(released.map((name) => [FUNCTION_NAME_VARIABLES[name], functionName(name)]));
/** The versions of a release: the alias on PREVIOUS moves to NEW (a rollback, back). */
const PREVIOUS = '6';
const NEW = '7';
/** The hook's Lambda context: the whole of its timeout left. */
const hookContext = { getRemainingTimeInMillis: () => PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS * 1000 };

let tables: TestTables;
let repositories: Repositories;
let pets: PetsRepository;
let keys: ApiKeysRepository;
/** Every command the authorizer sends the keys table. */
let keysCommands: SentCommand[];
const codeDeploy = mockClient(CodeDeployClient);

beforeAll(async () => {
  tables = await createTestTables();
  repositories = repositoriesFor(tables.client, tables);
  ({ pets } = repositories);
  const recording = recordingClient(tables.endpoint);
  keys = apiKeysRepository({ client: recording.client, tables });
  keysCommands = recording.sent;
  await pets.create({ name: 'Rex', categoryId: 1, status: 'available' });
  await pets.create({ name: 'Tom', categoryId: 2, status: 'sold' });
});

afterEach(() => {
  codeDeploy.reset();
  vi.restoreAllMocks();
});

/** Each operation's handler module, as its route names it. */
const handlerFactories = await loadHandlerFactories();

/** The real handlers (each route's module) and authorizer on the test tables. */
const realHandlers = (): Handlers => ({
  ...byHandledOperation(
    (operationId): Handler =>
      (event) =>
        handlerFactories[operationId]({ ...repositories, health: databaseHealth({ client: tables.client, tables }) })(
          event as APIGatewayProxyEvent,
          context,
        ),
  ),
  authorizer: (event) => createAuthorizer({ keys })(event as APIGatewayTokenAuthorizerEvent, context),
});

/**
 * Lambda's side of an invocation: the handler of the version invoked (`versions` by number), its
 * answer as JSON would carry it, or the error thrown, by its type and message.
 */
const invokeOf =
  (versions: Readonly<Record<string, Handlers>>): Invoke =>
  async (version, event) => {
    const [, name, number] = /^pet-store-test-(\w+):(\d+)$/.exec(version) ?? [];
    const handler = number === undefined ? undefined : versions[number]?.[name as CheckedFunction];
    if (!handler) throw new Error(`no handler for ${version}`);
    try {
      return { answer: JSON.parse(JSON.stringify(await handler(event))) as unknown };
    } catch (error) {
      const { name: errorType, message: errorMessage } = error instanceof Error ? error : new Error(String(error));
      return { functionError: { errorType, errorMessage } };
    }
  };

interface ReleaseOptions {
  readonly invoke?: Invoke;
  readonly env?: Environment;
  readonly now?: () => Date;
  /** The versions each deployment moves the alias between: NEW from PREVIOUS unless said. */
  readonly currentVersion?: string;
  readonly targetVersion?: string;
}

/**
 * A release of every checked function: one CodeDeploy deployment each (`d-<function>`), each
 * running the hook. Returns what each deployment's hook ended with and reported, and the lines it logged.
 */
const runRelease = async (handlers: Handlers, options: ReleaseOptions = {}) => {
  const { currentVersion = PREVIOUS, targetVersion = NEW } = options;
  codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
  const info = vi.spyOn(logger, 'info');
  const error = vi.spyOn(logger, 'error');
  const hook = createHook({
    invoke: options.invoke ?? invokeOf({ [targetVersion]: handlers }),
    codeDeploy: new CodeDeployClient({ region: 'eu-west-1' }),
    env: options.env ?? env,
    ...(options.now ? { now: options.now } : {}),
  });
  const results: Partial<Record<CheckedFunction, HookResult>> = {};
  for (const name of released) {
    mockDeployment(codeDeploy, `d-${name}`, appSpecJson({ name: functionName(name), currentVersion, targetVersion }));
    results[name] = await hook({ DeploymentId: `d-${name}`, LifecycleEventHookExecutionId: `e-${name}` }, hookContext);
  }
  const reported = codeDeploy
    .commandCalls(PutLifecycleEventHookExecutionStatusCommand)
    .map(({ args: [{ input }] }) => [input.deploymentId, input.lifecycleEventHookExecutionId, input.status]);
  const lines = [...info.mock.calls, ...error.mock.calls].map(([message, fields]) => ({ message, ...(fields as { check?: string }) }));
  return { results, reported, lines, failed: error.mock.calls.map(([, fields]) => fields as { check: string; problem: string }) };
};

/** Each deployment's result and report: Failed for the functions named, Succeeded for the others. */
const outcomes = (failed: readonly CheckedFunction[] = []) => {
  const status = (name: CheckedFunction) => (failed.includes(name) ? 'Failed' : 'Succeeded');
  return {
    results: Object.fromEntries(released.map((name) => [name, { status: status(name), reported: true }])),
    reported: released.map((name) => [`d-${name}`, `e-${name}`, status(name)]),
  };
};

describe('the pre-traffic hook on the real handlers, one deployment per released function', () => {
  it("reports Succeeded for each when every answer is right, with one line per check: each deployment's function's", async () => {
    const { results, reported, lines } = await runRelease(realHandlers());

    expect({ results, reported }).toEqual(outcomes());
    const passed = lines.filter(({ message }) => message === 'release check passed').map(({ check }) => check);
    // Each deployment's own checks, in the order of the deployments.
    const checks = releaseChecks();
    expect(passed).toEqual(released.flatMap((name) => checks.filter(({ target }) => target === name).map((check) => check.name)));
    expect(passed).toContain('getPet GET /pets/9007199254740991 answers 404 not_found');
  });

  it('writes nothing: the create it sends is refused before any write, and the authorizer only reads one key and its last use', async () => {
    const before = await pets.list({ limit: 100 });
    keysCommands.length = 0;
    await runRelease(realHandlers());
    expect(await pets.list({ limit: 100 })).toEqual(before);
    expect(keysCommands).toEqual([
      expect.objectContaining({ command: 'GetItem', tableName: tables.apiKeys }),
      expect.objectContaining({ command: 'GetItem', tableName: tables.apiKeyLastUse }),
    ]);
  });

  it('sends the authorizer a key of the form generated keys have, so that it reads the keys table', async () => {
    const tokens: string[] = [];
    const authorizer = realHandlers().authorizer;
    await runRelease({
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
  ])("reports Failed for %s, in that function's deployment, and the line names the check", async (_case, broken, check, problem) => {
    const { results, reported, failed } = await runRelease({ ...realHandlers(), ...broken });

    expect({ results, reported }).toEqual(outcomes(Object.keys(broken) as CheckedFunction[]));
    expect(failed).toHaveLength(1);
    expect(failed[0]?.check).toMatch(check);
    expect(failed[0]?.problem).toMatch(problem);
  });

  it('reports Failed when an invocation throws, naming only the kind of error', async () => {
    const handlers = realHandlers();
    const invoke: Invoke = async (version, event, signal) => {
      if (version === `${functionName('getPet')}:${NEW}`)
        throw Object.assign(new Error(`User is not authorized to invoke ${version}`), { name: 'AccessDeniedException' });
      return invokeOf({ [NEW]: handlers })(version, event, signal);
    };
    const { results, reported, failed } = await runRelease(handlers, { invoke });

    expect({ results, reported }).toEqual(outcomes(['getPet']));
    expect(failed).toEqual([{ check: expect.stringMatching(/^getPet/), problem: 'the invocation failed (AccessDeniedException)' }]);
  });

  it('in a rollback, checks the previous version the alias goes back to: Succeeded though the new one is broken', async () => {
    // Every function broken: an operation's answers 500, the authorizer fails.
    const broken: Handlers = {
      ...byHandledOperation((): Handler => async () => ({ statusCode: 500, body: '{}' })),
      authorizer: async () => {
        throw new TypeError('broken');
      },
    };
    const { results, reported, lines } = await runRelease(realHandlers(), {
      invoke: invokeOf({ [PREVIOUS]: realHandlers(), [NEW]: broken }),
      currentVersion: NEW,
      targetVersion: PREVIOUS,
    });

    expect({ results, reported }).toEqual(outcomes());
    expect(lines.filter(({ message }) => message === 'release target')).toEqual(
      released.map((name) => ({
        message: 'release target',
        deploymentId: `d-${name}`,
        function: name,
        currentVersion: NEW,
        targetVersion: PREVIOUS,
      })),
    );
  });

  it('reports Failed when its environment does not name the function a deployment releases', async () => {
    const { results, reported, failed } = await runRelease(realHandlers(), { env: {} });
    expect({ results, reported }).toEqual(outcomes(released));
    expect(failed.map(({ problem }) => problem)).toEqual(
      released.map((name) => `the deployment releases ${functionName(name)}, a function the hook does not check`),
    );
  });

  it('expects 410 gone from the unknown-id get once the operation is past its sunset', async () => {
    const afterSunset = () => new Date('2031-01-01T00:00:00Z');
    const handlers: Handlers = {
      ...realHandlers(),
      getPet: (event) => createGetPet({ pets, now: afterSunset })(event as APIGatewayProxyEvent, context),
    };
    const { results } = await runRelease(handlers, { now: afterSunset });
    expect(results).toEqual(outcomes().results);
  });
});
