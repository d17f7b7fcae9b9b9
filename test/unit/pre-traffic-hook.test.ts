/**
 * The pre-traffic hook's AWS side: invoking a version through Lambda's Invoke (the Lambda client
 * mocked with aws-sdk-client-mock), and its bundle, which must carry the SDK's event-stream codecs
 * the Lambda client imports.
 */
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { build } from 'esbuild';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FUNCTION_BUNDLING, HOOK_BUNDLING } from '../../infra/bundling';
import { lambdaInvoke } from '../../functions/pre-traffic-hook';
import { proxyEvent } from '../../shared/gateway-events';
import { projectRoot } from '../../shared/project-root';

const lambda = mockClient(LambdaClient);
afterEach(() => lambda.reset());

const VERSION = 'arn:aws:lambda:eu-west-1:123456789012:function:pet-store-prod-listPets:12';
const payload = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

describe('invoking a version through Lambda', () => {
  const invoke = lambdaInvoke(new LambdaClient({ region: 'eu-west-1' }));

  it('sends the event as the payload, to the version, and decodes the proxy answer', async () => {
    const answer = { statusCode: 200, headers: { 'Content-Type': 'application/json' }, body: '[]' };
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload(answer) as never });
    const event = proxyEvent({ query: { limit: '1' } });

    expect(await invoke(VERSION, event)).toEqual(answer);
    const [call] = lambda.commandCalls(InvokeCommand);
    expect(call?.args[0].input.FunctionName).toBe(VERSION);
    expect(JSON.parse(new TextDecoder().decode(call?.args[0].input.Payload as Uint8Array))).toEqual(event);
  });

  it('fails on a function error, naming its type and nothing of its message', async () => {
    lambda.on(InvokeCommand).resolves({
      StatusCode: 200,
      FunctionError: 'Unhandled',
      Payload: payload({ errorType: 'Runtime.ImportModuleError', errorMessage: 'Cannot find module at /var/task/secret-path' }) as never,
    });
    await expect(invoke(VERSION, proxyEvent())).rejects.toThrow(/^function error Runtime\.ImportModuleError$/);
  });

  it('fails on an answer that is not an API Gateway proxy answer', async () => {
    lambda.on(InvokeCommand).resolves({ StatusCode: 200, Payload: payload({ pets: [] }) as never });
    await expect(invoke(VERSION, proxyEvent())).rejects.toThrow('not an API Gateway proxy answer');
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
