/**
 * The pre-traffic hook's AWS side: reading what a deployment releases from CodeDeploy (its
 * AppSpec, in the shapes CodeDeploy's API reference documents), invoking that version through
 * Lambda's Invoke (both clients mocked with aws-sdk-client-mock), the deadline that lets it report
 * whatever a call does, and its bundle, which must carry the SDK's event-stream codecs the Lambda
 * client imports.
 */
import {
  CodeDeployClient,
  GetApplicationRevisionCommand,
  GetDeploymentCommand,
  PutLifecycleEventHookExecutionStatusCommand,
} from '@aws-sdk/client-codedeploy';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { build } from 'esbuild';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FUNCTION_BUNDLING, HOOK_BUNDLING } from '../../infra/bundling';
import { createHandler } from '../../functions/pre-traffic-hook';
import { CHECK_DEADLINE_CAP_MS, checkDeadlineMs, READ_DEADLINE_CAP_MS, REPORT_MARGIN_MS } from '../../shared/release/hook-deadlines';
import type { HookStatus, LifecycleHookEvent } from '../../shared/release/hook-report';
import { lambdaInvoke } from '../../shared/release/lambda-invoke';
import { proxyEvent, tokenEvent } from '../../shared/gateway-events';
import { logger } from '../../shared/logger';
import { FUNCTION_NAME_VARIABLES, type CheckedFunction, type Invoke } from '../../shared/release-checks';
import { projectRoot } from '../../shared/project-root';
import { PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS } from '../../shared/stack';
import { APPLICATION_NAME, appSpecJson, appSpecYaml, mockDeployment, type RevisionShape } from '../support/code-deploy';
import { recordMockedCalls } from '../support/aws-calls';
import { runCommand } from '../support/command';

const lambda = mockClient(LambdaClient);
const codeDeploy = mockClient(CodeDeployClient);
afterEach(() => {
  // The hook's calls, for the IAM check of its role (test/infra/iam-simulation.test.ts).
  recordMockedCalls('preTrafficHook', [...lambda.calls(), ...codeDeploy.calls()]);
  lambda.reset();
  codeDeploy.reset();
  vi.restoreAllMocks();
});

const VERSION = 'arn:aws:lambda:eu-west-1:123456789012:function:pet-store-prod-listPets:12';
const payload = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/** The stage's function names, as the stack puts them in the hook's environment. */
const functionName = (name: CheckedFunction) => `pet-store-prod-${name}`;
const env = Object.fromEntries(
  Object.entries(FUNCTION_NAME_VARIABLES).map(([name, variable]) => [variable, functionName(name as CheckedFunction)]),
);
const event = (deploymentId: string): LifecycleHookEvent => ({
  DeploymentId: deploymentId,
  LifecycleEventHookExecutionId: `${deploymentId}-hook`,
});
const wholeTimeout = { getRemainingTimeInMillis: () => PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS * 1000 };

/** The hook as deployed, on the mocked clients. */
const hookOnMocks = () =>
  createHandler({
    invoke: lambdaInvoke(new LambdaClient({ region: 'eu-west-1' })),
    codeDeploy: new CodeDeployClient({ region: 'eu-west-1' }),
    env,
  });

/** What the hook reported, by deployment. */
const reported = () =>
  codeDeploy.commandCalls(PutLifecycleEventHookExecutionStatusCommand).map(({ args: [{ input }] }) => [input.deploymentId, input.status]);
/** The versions the hook invoked (FunctionName of each Invoke). */
const invoked = () => lambda.commandCalls(InvokeCommand).map(({ args: [{ input }] }) => input.FunctionName);

/** Lambda's answers: listPets' right answer for the versions in `right`, a 500 for any other. */
const listPetsAnswers = (...right: string[]) => {
  lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload({ statusCode: 500, body: '{}' }) as never });
  for (const version of right) {
    lambda
      .on(InvokeCommand, { FunctionName: version })
      .resolves({ StatusCode: 200, Payload: payload({ statusCode: 200, headers: {}, body: '[]' }) as never });
  }
};

describe('invoking a version through Lambda', () => {
  const invoke = lambdaInvoke(new LambdaClient({ region: 'eu-west-1' }));
  const signal = new AbortController().signal;

  it('sends the event as the payload, to the version, and returns the answer', async () => {
    const answer = { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: '[]' };
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload(answer) as never });
    const event = proxyEvent({ query: { limit: '1' } });

    expect(await invoke(VERSION, event, signal)).toEqual({ answer });
    const [call] = lambda.commandCalls(InvokeCommand);
    expect(call?.args[0].input.FunctionName).toBe(VERSION);
    expect(JSON.parse(new TextDecoder().decode(call?.args[0].input.Payload as Uint8Array))).toEqual(event);
  });

  it('returns a function error by its type and message, for the check to judge', async () => {
    lambda.on(InvokeCommand).resolves({
      StatusCode: 200,
      FunctionError: 'Unhandled',
      Payload: payload({ errorType: 'Error', errorMessage: 'Unauthorized', trace: [] }) as never,
    });
    expect(await invoke(VERSION, tokenEvent('Bearer x'), signal)).toEqual({
      functionError: { errorType: 'Error', errorMessage: 'Unauthorized' },
    });
  });

  it("names a function error by Lambda's kind when its payload says nothing", async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, FunctionError: 'Unhandled', Payload: payload('not an object') as never });
    expect(await invoke(VERSION, proxyEvent(), signal)).toEqual({ functionError: { errorType: 'Unhandled', errorMessage: '' } });
  });

  it('passes the abort signal to the client', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload({}) as never });
    await invoke(VERSION, proxyEvent(), signal);
    const [call] = lambda.commandCalls(InvokeCommand);
    // The options send() was given: the typings of the mock know only the command.
    expect((call?.args as unknown[] | undefined)?.[1]).toEqual({ abortSignal: signal });
  });
});

describe('the version it checks: the one the deployment moves the alias to', () => {
  it.each(Object.keys(FUNCTION_NAME_VARIABLES) as CheckedFunction[])(
    "a release of %s invokes that function's TargetVersion, and nothing else",
    async (name) => {
      mockDeployment(codeDeploy, `d-${name}`, appSpecJson({ name: functionName(name), currentVersion: '6', targetVersion: '7' }));
      codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
      lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload({ statusCode: 503, body: '{}' }) as never });
      await hookOnMocks()(event(`d-${name}`), wholeTimeout);
      expect(invoked().length).toBeGreaterThan(0);
      expect(new Set(invoked())).toEqual(new Set([`${functionName(name)}:7`]));
    },
  );

  const codeDeployCalled = () => codeDeploy.calls().map((call) => (call.args[0] as { constructor: { name: string } }).constructor.name);

  it("in a release, the new version (TargetVersion), with its function's checks only, and reports Succeeded", async () => {
    mockDeployment(codeDeploy, 'd-RELEASE', appSpecJson({ name: functionName('listPets'), currentVersion: '6', targetVersion: '7' }));
    codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
    listPetsAnswers(`${functionName('listPets')}:7`);
    const info = vi.spyOn(logger, 'info');

    expect(await hookOnMocks()(event('d-RELEASE'), wholeTimeout)).toEqual({ status: 'Succeeded', reported: true });
    expect(invoked()).toEqual(['pet-store-prod-listPets:7']);
    expect(reported()).toEqual([['d-RELEASE', 'Succeeded']]);
    // As CodeDeploy's API reference has it: the deployment, then its revision's AppSpec.
    expect(codeDeployCalled()).toEqual([
      'GetDeploymentCommand',
      'GetApplicationRevisionCommand',
      'PutLifecycleEventHookExecutionStatusCommand',
    ]);
    expect(codeDeploy.commandCalls(GetDeploymentCommand)[0]?.args[0].input).toEqual({ deploymentId: 'd-RELEASE' });
    expect(codeDeploy.commandCalls(GetApplicationRevisionCommand)[0]?.args[0].input).toEqual({
      applicationName: APPLICATION_NAME,
      revision: { revisionType: 'AppSpecContent', appSpecContent: { sha256: expect.stringMatching(/^[0-9a-f]{64}$/) } },
    });
    expect(info).toHaveBeenCalledWith('release target', {
      deploymentId: 'd-RELEASE',
      function: 'listPets',
      currentVersion: '6',
      targetVersion: '7',
    });
  });

  it('in a rollback, the older version the alias goes back to, not the broken newer one: Succeeded when it answers right', async () => {
    // A stack rollback: CloudFormation moves the alias back from 7 to 6, before it restores the hook.
    mockDeployment(codeDeploy, 'd-ROLLBACK', appSpecJson({ name: functionName('listPets'), currentVersion: '7', targetVersion: '6' }));
    codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
    listPetsAnswers(`${functionName('listPets')}:6`);

    expect(await hookOnMocks()(event('d-ROLLBACK'), wholeTimeout)).toEqual({ status: 'Succeeded', reported: true });
    expect(invoked()).toEqual(['pet-store-prod-listPets:6']);
    expect(reported()).toEqual([['d-ROLLBACK', 'Succeeded']]);
  });

  it('in a rollback whose older version answers wrong too, reports Failed', async () => {
    mockDeployment(codeDeploy, 'd-ROLLBACK', appSpecJson({ name: functionName('listPets'), currentVersion: '7', targetVersion: '6' }));
    codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
    listPetsAnswers(`${functionName('listPets')}:7`);

    expect(await hookOnMocks()(event('d-ROLLBACK'), wholeTimeout)).toEqual({ status: 'Failed', reported: true });
    expect(invoked()).toEqual(['pet-store-prod-listPets:6']);
  });

  it.each<[string, string, RevisionShape]>([
    ['JSON, as CloudFormation writes it, read back as a String revision', 'json', 'AppSpecContent'],
    ['JSON, read back as an AppSpecContent revision', 'json', 'AppSpecContent, read back as AppSpecContent'],
    ['YAML, read back as a String revision', 'yaml', 'AppSpecContent'],
    ['JSON in a String revision, which GetDeployment gives whole', 'json', 'String'],
    ['YAML in a String revision', 'yaml', 'String'],
  ])('reads an AppSpec in %s', async (_shape, format, shape) => {
    const release = { name: functionName('authorizer'), currentVersion: '3', targetVersion: '4' };
    mockDeployment(codeDeploy, 'd-SHAPE', format === 'json' ? appSpecJson(release) : appSpecYaml(release), shape);
    codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
    lambda.on(InvokeCommand).resolves({
      StatusCode: 200,
      FunctionError: 'Unhandled',
      Payload: payload({ errorType: 'Error', errorMessage: 'Unauthorized' }) as never,
    });

    expect(await hookOnMocks()(event('d-SHAPE'), wholeTimeout)).toEqual({ status: 'Succeeded', reported: true });
    expect(invoked()).toEqual(['pet-store-prod-authorizer:4']);
    expect(codeDeploy.commandCalls(GetApplicationRevisionCommand)).toHaveLength(shape === 'String' ? 0 : 1);
  });

  it("invokes the function's ARN, qualified, when the AppSpec names it by ARN", async () => {
    const arn = `arn:aws:lambda:eu-west-1:123456789012:function:${functionName('getPet')}`;
    mockDeployment(codeDeploy, 'd-ARN', appSpecJson({ name: arn, currentVersion: '1', targetVersion: '2' }));
    codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload({ statusCode: 500, body: '{}' }) as never });

    await hookOnMocks()(event('d-ARN'), wholeTimeout);
    expect(invoked()).toEqual([`${arn}:2`]);
  });
});

describe('a deployment it cannot check: Failed, reported, after one line saying why', () => {
  const releaseOf = (name: CheckedFunction) => ({ name: functionName(name), currentVersion: '6', targetVersion: '7' });

  it.each<[string, () => void, string]>([
    [
      'an AppSpec that is neither JSON nor YAML',
      () => mockDeployment(codeDeploy, 'd-X', '{"version": "0.0", "Resources": [\n  {'),
      'the AppSpec is neither JSON nor YAML',
    ],
    [
      'an AppSpec of another platform (ECS)',
      () =>
        mockDeployment(
          codeDeploy,
          'd-X',
          JSON.stringify({
            version: 0.0,
            Resources: [{ TargetService: { Type: 'AWS::ECS::Service', Properties: { TaskDefinition: 'td' } } }],
          }),
        ),
      'the AppSpec is not a Lambda AppSpec (Resources.0.TargetService.Type: ',
    ],
    [
      'a target that is no published version ($LATEST)',
      () => mockDeployment(codeDeploy, 'd-X', appSpecJson({ ...releaseOf('listPets'), targetVersion: '$LATEST' })),
      'the AppSpec is not a Lambda AppSpec (Resources.0.ReleasedFunction.Properties.TargetVersion: not a published version)',
    ],
    [
      'an AppSpec naming no function',
      () => mockDeployment(codeDeploy, 'd-X', JSON.stringify({ version: '0.0', Resources: [] })),
      'the AppSpec names 0 functions, expected one',
    ],
    [
      "a function the hook does not check (another stage's)",
      () => mockDeployment(codeDeploy, 'd-X', appSpecJson({ ...releaseOf('listPets'), name: 'pet-store-staging-listPets' })),
      'the deployment releases pet-store-staging-listPets, a function the hook does not check',
    ],
    [
      'an alias other than live',
      () => mockDeployment(codeDeploy, 'd-X', appSpecJson({ ...releaseOf('listPets'), alias: 'beta' })),
      'the deployment moves the alias beta, not live',
    ],
    [
      'a revision with no AppSpec in it (S3)',
      () =>
        codeDeploy.on(GetDeploymentCommand).resolves({
          deploymentInfo: {
            applicationName: APPLICATION_NAME,
            revision: { revisionType: 'S3', s3Location: { bucket: 'b', key: 'k', bundleType: 'YAML' } },
          },
        }),
      "the deployment's revision (S3) holds no AppSpec",
    ],
    [
      'an application revision read back without its content',
      () => {
        const revision = { revisionType: 'AppSpecContent' as const, appSpecContent: { sha256: '0'.repeat(64) } };
        codeDeploy.on(GetDeploymentCommand).resolves({ deploymentInfo: { applicationName: APPLICATION_NAME, revision } });
        codeDeploy.on(GetApplicationRevisionCommand).resolves({ applicationName: APPLICATION_NAME, revision });
      },
      'the application revision (AppSpecContent) holds no AppSpec',
    ],
  ])('%s', async (_case, mock, problem) => {
    mock();
    codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
    const error = vi.spyOn(logger, 'error');

    expect(await hookOnMocks()(event('d-X'), wholeTimeout)).toEqual({ status: 'Failed', reported: true });
    expect(reported()).toEqual([['d-X', 'Failed']]);
    expect(invoked()).toEqual([]);
    expect(error.mock.calls).toEqual([['release not checked', { deploymentId: 'd-X', problem: expect.stringContaining(problem) }]]);
  });

  it('the deployment unreadable (access denied): the error by its name and a message without ARNs', async () => {
    codeDeploy
      .on(GetDeploymentCommand)
      .rejects(
        Object.assign(new Error(`not authorized to perform codedeploy:GetDeployment on ${VERSION}`), { name: 'AccessDeniedException' }),
      );
    codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
    const error = vi.spyOn(logger, 'error');

    expect(await hookOnMocks()(event('d-X'), wholeTimeout)).toEqual({ status: 'Failed', reported: true });
    expect(error.mock.calls).toEqual([
      [
        'release not checked',
        {
          deploymentId: 'd-X',
          problem: 'the deployment could not be read',
          errorName: 'AccessDeniedException',
          errorMessage: 'not authorized to perform codedeploy:GetDeployment on <arn>',
        },
      ],
    ]);
  });

  it('the environment naming no function: nothing is checked, nothing passes', async () => {
    mockDeployment(codeDeploy, 'd-X', appSpecJson(releaseOf('listPets')));
    codeDeploy.on(PutLifecycleEventHookExecutionStatusCommand).resolves({});
    const hook = createHandler({
      invoke: lambdaInvoke(new LambdaClient({ region: 'eu-west-1' })),
      codeDeploy: new CodeDeployClient({ region: 'eu-west-1' }),
      env: {},
    });

    expect(await hook(event('d-X'), wholeTimeout)).toEqual({ status: 'Failed', reported: true });
    expect(invoked()).toEqual([]);
  });
});

describe('the deadlines', () => {
  it("of each check: the hook's remaining time less the margin to report, at most the cap, never negative", () => {
    const hookTimeoutMs = PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS * 1000;
    expect(checkDeadlineMs(hookTimeoutMs)).toBe(CHECK_DEADLINE_CAP_MS);
    expect(checkDeadlineMs(REPORT_MARGIN_MS + 1_000)).toBe(1_000);
    expect(checkDeadlineMs(REPORT_MARGIN_MS - 1_000)).toBe(0);
    // Reading the deployment, then the checks, then the report: within the hook's timeout.
    expect(READ_DEADLINE_CAP_MS + CHECK_DEADLINE_CAP_MS + REPORT_MARGIN_MS).toBeLessThan(hookTimeoutMs);
  });

  it('report Failed when an invocation never ends, once its deadline has passed, and abort it', { timeout: 5_000 }, async () => {
    const signals: AbortSignal[] = [];
    const hanging: Invoke = (_version, _event, signal) => {
      signals.push(signal);
      return new Promise(() => undefined);
    };
    const statuses: HookStatus[] = [];
    const error = vi.spyOn(logger, 'error');
    const hook = createHandler({
      invoke: hanging,
      readAppSpec: async () => appSpecJson({ name: functionName('getPet'), currentVersion: '1', targetVersion: '2' }),
      report: async (_event, status) => void statuses.push(status),
      env,
    });

    const started = Date.now();
    // 50 ms left for the checks once the margin to report is kept back.
    const result = await hook(event('d-1'), { getRemainingTimeInMillis: () => REPORT_MARGIN_MS + 50 });

    expect(result).toEqual({ status: 'Failed', reported: true });
    expect(statuses).toEqual(['Failed']);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(signals).toHaveLength(1);
    expect(signals.every((signal) => signal.aborted)).toBe(true);
    const problems = error.mock.calls.map(([, fields]) => (fields as { problem?: string }).problem);
    expect(problems).toEqual(['the invocation failed (InvocationTimedOut: no outcome within 50 ms)']);
  });

  it('report Failed when reading the deployment never ends, and abort it', { timeout: 5_000 }, async () => {
    let aborted: AbortSignal | undefined;
    const statuses: HookStatus[] = [];
    const error = vi.spyOn(logger, 'error');
    const hook = createHandler({
      invoke: () => Promise.reject(new Error('not to be invoked')),
      readAppSpec: (_deploymentId, signal) => {
        aborted = signal;
        return new Promise(() => undefined);
      },
      report: async (_event, status) => void statuses.push(status),
      env,
    });

    const result = await hook(event('d-1'), { getRemainingTimeInMillis: () => REPORT_MARGIN_MS + 50 });

    expect(result).toEqual({ status: 'Failed', reported: true });
    expect(statuses).toEqual(['Failed']);
    expect(aborted?.aborted).toBe(true);
    expect(error.mock.calls).toEqual([
      [
        'release not checked',
        {
          deploymentId: 'd-1',
          problem: 'the deployment could not be read',
          errorName: 'InvocationTimedOut',
          errorMessage: 'no outcome within 50 ms',
        },
      ],
    ]);
  });
});

describe('a report CodeDeploy does not take', () => {
  it('ends the hook normally, marked unreported, after one line saying why (no thrown error, so no stack trace)', async () => {
    const crash: Invoke = () => Promise.reject(new Error('crashed'));
    const error = vi.spyOn(logger, 'error');
    const hook = createHandler({
      invoke: crash,
      readAppSpec: async () => appSpecJson({ name: functionName('listPets'), currentVersion: '1', targetVersion: '2' }),
      report: () => Promise.reject(Object.assign(new Error(`Not authorized for ${VERSION}`), { name: 'AccessDeniedException' })),
      env,
    });

    const result = await hook(event('d-1'), wholeTimeout);

    expect(result).toEqual({ status: 'Failed', reported: false });
    const unreported = error.mock.calls.filter(([message]) => message === 'release checks could not be reported');
    expect(unreported).toEqual([
      [
        'release checks could not be reported',
        { status: 'Failed', errorName: 'AccessDeniedException', errorMessage: 'Not authorized for <arn>' },
      ],
    ]);
  });
});

describe("the hook's bundle", () => {
  /** Bundles the hook with a bundling's aliases, as CDK passes them to esbuild; returns its code. */
  const bundle = async (bundling: { esbuildArgs: { '--alias': readonly string[] } }): Promise<string> => {
    const alias = Object.fromEntries(bundling.esbuildArgs['--alias'].map((entry) => entry.split('=') as [string, string]));
    const { outputFiles } = await build({
      entryPoints: [resolve(projectRoot, 'functions/pre-traffic-hook.ts')],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: FUNCTION_BUNDLING.target,
      mainFields: [...FUNCTION_BUNDLING.mainFields],
      alias,
      outfile: 'index.mjs',
      logLevel: 'silent',
      write: false,
    });
    return outputFiles[0]?.text ?? '';
  };

  it(
    "builds with its own bundling, and would not with the API functions' (their event-streams stand-in)",
    { timeout: 60_000 },
    async () => {
      await expect(bundle(HOOK_BUNDLING)).resolves.toContain('GetApplicationRevision');
      await expect(bundle(FUNCTION_BUNDLING)).rejects.toThrow(/resolveEventStreamSerdeConfig/);
    },
  );

  it(
    'loads as Lambda loads it, an ES module with its handler (no CommonJS require of a Node module in it)',
    { timeout: 60_000 },
    async () => {
      const folder = mkdtempSync(join(tmpdir(), 'pre-traffic-hook-'));
      try {
        const file = join(folder, 'index.mjs');
        writeFileSync(file, await bundle(HOOK_BUNDLING));
        const loaded = await runCommand(process.execPath, [
          '--input-type=module',
          '--eval',
          `const { handler } = await import(${JSON.stringify(pathToFileURL(file).href)}); console.log(typeof handler);`,
        ]);
        expect(loaded.stderr).not.toMatch(/Error/);
        expect(loaded).toMatchObject({ status: 0, stdout: 'function\n' });
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
  );
});
