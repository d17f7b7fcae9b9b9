/**
 * The pre-traffic hook's AWS side: invoking a version through Lambda's Invoke (the Lambda client
 * mocked with aws-sdk-client-mock), the deadline that lets it report whatever an invocation does,
 * and its bundle, which must carry the SDK's event-stream codecs the Lambda client imports.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { build } from 'esbuild';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FUNCTION_BUNDLING, HOOK_BUNDLING } from '../../infra/bundling';
import {
  CHECK_DEADLINE_CAP_MS,
  checkDeadlineMs,
  createHandler,
  lambdaInvoke,
  REPORT_MARGIN_MS,
  type HookStatus,
} from '../../functions/pre-traffic-hook';
import { proxyEvent, tokenEvent } from '../../shared/gateway-events';
import { logger } from '../../shared/logger';
import { VERSION_ARN_VARIABLES, type Invoke } from '../../shared/release-checks';
import { projectRoot } from '../../shared/project-root';
import { PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS } from '../../shared/stack';

const lambda = mockClient(LambdaClient);
afterEach(() => {
  lambda.reset();
  vi.restoreAllMocks();
});

const VERSION = 'arn:aws:lambda:eu-west-1:123456789012:function:pet-store-prod-listPets:12';
const payload = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

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

describe('the deadline of each check', () => {
  it("is the hook's remaining time less the margin to report, at most the cap, never negative", () => {
    const hookTimeoutMs = PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS * 1000;
    expect(checkDeadlineMs(hookTimeoutMs)).toBe(CHECK_DEADLINE_CAP_MS);
    expect(checkDeadlineMs(REPORT_MARGIN_MS + 1_000)).toBe(1_000);
    expect(checkDeadlineMs(REPORT_MARGIN_MS - 1_000)).toBe(0);
    expect(CHECK_DEADLINE_CAP_MS + REPORT_MARGIN_MS).toBeLessThan(hookTimeoutMs);
  });

  it('reports Failed when an invocation never ends, once its deadline has passed, and aborts it', { timeout: 5_000 }, async () => {
    const signals: AbortSignal[] = [];
    const hanging: Invoke = (_functionArn, _event, signal) => {
      signals.push(signal);
      return new Promise(() => undefined);
    };
    const reported: HookStatus[] = [];
    const error = vi.spyOn(logger, 'error');
    const env = Object.fromEntries(Object.values(VERSION_ARN_VARIABLES).map((variable) => [variable, VERSION]));
    const hook = createHandler({ invoke: hanging, report: async (_event, status) => void reported.push(status), env });

    const started = Date.now();
    // 50 ms left for the checks once the margin to report is kept back.
    const result = await hook(
      { DeploymentId: 'd-1', LifecycleEventHookExecutionId: 'e-1' },
      { getRemainingTimeInMillis: () => REPORT_MARGIN_MS + 50 },
    );

    expect(result).toEqual({ status: 'Failed', reported: true });
    expect(reported).toEqual(['Failed']);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(signals.length).toBe(Object.keys(VERSION_ARN_VARIABLES).length);
    expect(signals.every((signal) => signal.aborted)).toBe(true);
    const problems = error.mock.calls.map(([, fields]) => (fields as { problem?: string }).problem);
    expect(problems).toEqual(signals.map(() => 'the invocation failed (InvocationTimedOut: no outcome within 50 ms)'));
  });
});

describe('a report CodeDeploy does not take', () => {
  it('ends the hook normally, marked unreported, after one line saying why (no thrown error, so no stack trace)', async () => {
    const env = Object.fromEntries(Object.values(VERSION_ARN_VARIABLES).map((variable) => [variable, VERSION]));
    const crash: Invoke = () => Promise.reject(new Error('crashed'));
    const error = vi.spyOn(logger, 'error');
    const hook = createHandler({
      invoke: crash,
      report: () => Promise.reject(Object.assign(new Error(`Not authorized for ${VERSION}`), { name: 'AccessDeniedException' })),
      env,
    });

    const result = await hook(
      { DeploymentId: 'd-1', LifecycleEventHookExecutionId: 'e-1' },
      { getRemainingTimeInMillis: () => PRE_TRAFFIC_HOOK_TIMEOUT_SECONDS * 1000 },
    );

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
  /** Bundles the hook with a bundling's aliases, as CDK passes them to esbuild. */
  const bundle = async (bundling: { esbuildArgs: { '--alias': readonly string[] } }) => {
    const alias = Object.fromEntries(bundling.esbuildArgs['--alias'].map((entry) => entry.split('=') as [string, string]));
    await build({
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
  };

  it(
    "builds with its own bundling, and would not with the API functions' (their event-streams stand-in)",
    { timeout: 60_000 },
    async () => {
      await expect(bundle(HOOK_BUNDLING)).resolves.toBeUndefined();
      await expect(bundle(FUNCTION_BUNDLING)).rejects.toThrow(/resolveEventStreamSerdeConfig/);
    },
  );
});
