/**
 * The command line of `npm run smoke`: the deployment (--url, or --stage's ApiUrl output from a
 * CloudFormation mocked with aws-sdk-client-mock), the key, and one-line usage errors that never
 * repeat the key.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { API_KEY_PREFIX, generateApiKey } from '../../shared/api-keys';
import { UsageError } from '../../tools/cli';
import { REQUEST_TIMEOUT_MS } from '../../tools/requests';
import { parseSmokeCommand, resolveBaseUrl, SMOKE_USAGE, stackLookup } from '../../tools/smoke/options';
import { stageSettings } from '../../infra/stages';
import { stackOutputs } from '../../shared/stack';
import { runSmoke } from '../../tools/smoke/run';

const KEY = 'petstore_smoke_unit_key_0123456789abcdef';
const URL_V1 = 'https://abc123.execute-api.eu-west-1.amazonaws.com/v1';

/** The UsageError a command line gets, checked to be one line without the key. */
const usageErrorOf = (args: string[], env: Record<string, string> = {}): string => {
  let thrown: unknown;
  try {
    parseSmokeCommand(args, env);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(UsageError);
  const message = (thrown as Error).message;
  expect(message).not.toContain('\n');
  expect(message).not.toContain(KEY);
  return message;
};

describe('npm run smoke options', () => {
  it.each([URL_V1, `${URL_V1}/`, `${URL_V1}//`])('takes the base URL %s with or without a trailing slash', (url) => {
    expect(parseSmokeCommand(['--url', url, '--key', KEY], {})).toEqual({
      target: { kind: 'url', url: URL_V1 },
      key: KEY,
      readOnly: false,
      json: false,
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
  });

  it('takes the key from PETSTORE_API_KEY, and --key before it', () => {
    expect(parseSmokeCommand(['--url', URL_V1], { PETSTORE_API_KEY: KEY })?.key).toBe(KEY);
    expect(parseSmokeCommand(['--url', URL_V1, '--key', KEY], { PETSTORE_API_KEY: 'another' })?.key).toBe(KEY);
  });

  it('reads --read-only, --json, --stage with --region, and --help', () => {
    expect(parseSmokeCommand(['--stage', 'prod', '--region', 'eu-west-1', '--read-only', '--json'], { PETSTORE_API_KEY: KEY })).toEqual({
      target: { kind: 'stage', stage: 'prod', region: 'eu-west-1' },
      key: KEY,
      readOnly: true,
      json: true,
      timeoutMs: REQUEST_TIMEOUT_MS,
    });
    expect(parseSmokeCommand(['--help'], {})).toBeUndefined();
  });

  it.each(['http://localhost:3000/v1', 'http://127.0.0.1:3000/v1', 'http://127.8.9.10/v1/', 'http://[::1]:3000/v1'])(
    'takes plain http to this machine: %s',
    (url) => {
      expect(parseSmokeCommand(['--url', url, '--key', KEY], {})?.target).toEqual({ kind: 'url', url: url.replace(/\/$/, '') });
    },
  );

  it('takes the time each request waits from PETSTORE_SMOKE_TIMEOUT_MS, and says the default in its usage', () => {
    expect(parseSmokeCommand(['--url', URL_V1, '--key', KEY], { PETSTORE_SMOKE_TIMEOUT_MS: '250' })?.timeoutMs).toBe(250);
    expect(SMOKE_USAGE).toContain(`each request gives up after ${REQUEST_TIMEOUT_MS / 1000} s`);
  });

  it.each([
    ['no URL', ['--key', KEY], /give the deployment to check, --url URL or --stage STAGE/],
    ['no key', ['--url', URL_V1], /give an API key, with --key or in PETSTORE_API_KEY/],
    ['an empty key', ['--url', URL_V1, '--key', ''], /give an API key/],
    ['both --url and --stage', ['--url', URL_V1, '--stage', 'prod', '--key', KEY], /--url or --stage, not both/],
    ['--region without --stage', ['--url', URL_V1, '--region', 'eu-west-1', '--key', KEY], /--region goes with --stage/],
    ['an unknown option', ['--url', URL_V1, '--key', KEY, '--verbose'], /unknown option '--verbose'/],
    ['a key as an argument', ['--url', URL_V1, KEY], /takes only options/],
    [
      'a URL without /v1',
      ['--url', 'https://api.example.com', '--key', KEY],
      /--url must be the API's base URL, http or https and ending in \/v1/,
    ],
    ['a URL below /v1', ['--url', `${URL_V1}/pets`, '--key', KEY], /ending in \/v1/],
    ['a URL that is not http', ['--url', 'ftp://api.example.com/v1', '--key', KEY], /http or https/],
    ['a URL with a query', ['--url', `${URL_V1}?x=1`, '--key', KEY], /--url must be/],
    // The key would cross the network in clear.
    ['plain http to another host', ['--url', 'http://api.example.com/v1', '--key', KEY], /plain http to api\.example\.com.*in clear/],
    ['plain http to a private address', ['--url', 'http://10.0.0.7:3000/v1', '--key', KEY], /plain http to 10\.0\.0\.7:3000/],
    ['plain http to a name that starts like localhost', ['--url', 'http://localhost.example.com/v1', '--key', KEY], /plain http/],
  ])('refuses %s in one line', (_, args, message) => {
    expect(usageErrorOf(args)).toMatch(message);
  });

  it.each(['0', '-5', '1.5', 'ten', '700000'])('refuses PETSTORE_SMOKE_TIMEOUT_MS=%s in one line', (value) => {
    expect(usageErrorOf(['--url', URL_V1, '--key', KEY], { PETSTORE_SMOKE_TIMEOUT_MS: value })).toMatch(
      /PETSTORE_SMOKE_TIMEOUT_MS must be a number of milliseconds from 1 to 600000/,
    );
  });
});

describe('npm run smoke --stage for a stage in several regions', () => {
  const stage = 'global';
  const regions = stageSettings(stage).regions ?? [];

  it("reads the stage's domain (ApiUrl) from its home region's stack without --region", () => {
    expect(regions.length).toBeGreaterThan(1);
    expect(stackLookup({ kind: 'stage', stage })).toEqual({ region: regions[0], output: stackOutputs.apiUrl });
  });

  it("reads a region's own name (RegionalApiUrl) from that region's stack with --region", () => {
    for (const region of regions)
      expect(stackLookup({ kind: 'stage', stage, region })).toEqual({ region, output: stackOutputs.regionalApiUrl });
  });

  it('refuses a region the stage does not run in, in one line naming its regions', () => {
    expect(() => stackLookup({ kind: 'stage', stage, region: 'eu-north-1' })).toThrow(
      `Stage '${stage}' runs in ${regions.join(', ')}, not in eu-north-1: see npm run smoke -- --help`,
    );
  });

  it("takes the region's own URL from its stack's RegionalApiUrl output", async () => {
    const cloudFormation = new CloudFormationClient({ region: regions[1] });
    const mock = mockClient(cloudFormation);
    const ownUrl = `https://${regions[1]}.api.example.com/v1`;
    mock.on(DescribeStacksCommand, { StackName: 'PetStore-global' }).resolves({
      Stacks: [
        {
          StackName: 'PetStore-global',
          StackStatus: 'UPDATE_COMPLETE',
          CreationTime: new Date(),
          Outputs: [
            { OutputKey: stackOutputs.apiUrl, OutputValue: 'https://api.example.com/v1' },
            { OutputKey: stackOutputs.regionalApiUrl, OutputValue: ownUrl },
          ],
        },
      ],
    });
    try {
      expect(await resolveBaseUrl({ kind: 'stage', stage, region: regions[1] }, cloudFormation)).toBe(ownUrl);
      expect(await resolveBaseUrl({ kind: 'stage', stage }, cloudFormation)).toBe('https://api.example.com/v1');
    } finally {
      mock.restore();
    }
  });

  it("keeps a stage in one region on its ApiUrl, in --region or the environment's", () => {
    expect(stackLookup({ kind: 'stage', stage: 'prod', region: 'eu-west-1' })).toEqual({
      region: 'eu-west-1',
      output: stackOutputs.apiUrl,
    });
    expect(stackLookup({ kind: 'stage', stage: 'prod' })).toEqual({ region: undefined, output: stackOutputs.apiUrl });
  });
});

describe('npm run smoke --stage', () => {
  const cloudFormation = new CloudFormationClient({ region: 'eu-west-1' });
  const mock = mockClient(cloudFormation);
  afterEach(() => mock.reset());

  const outputs = (apiUrl: string) => ({
    Stacks: [
      {
        StackName: 'PetStore-staging',
        StackStatus: 'UPDATE_COMPLETE' as const,
        CreationTime: new Date(),
        Outputs: [
          { OutputKey: 'ApiUrl', OutputValue: apiUrl },
          { OutputKey: 'ApiKeysTableName', OutputValue: 'keys' },
        ],
      },
    ],
  });

  it("takes the URL from the ApiUrl output of the stage's stack", async () => {
    mock.on(DescribeStacksCommand, { StackName: 'PetStore-staging' }).resolves(outputs(URL_V1));
    expect(await resolveBaseUrl({ kind: 'stage', stage: 'staging' }, cloudFormation)).toBe(URL_V1);
    expect(mock.commandCalls(DescribeStacksCommand)).toHaveLength(1);
  });

  it('accepts an ApiUrl with a trailing slash, as a custom domain may give it', async () => {
    mock.on(DescribeStacksCommand).resolves(outputs('https://api.example.com/v1/'));
    expect(await resolveBaseUrl({ kind: 'stage', stage: 'staging' }, cloudFormation)).toBe('https://api.example.com/v1');
  });

  it('says in one line that a stage has no stack (exit status 2)', async () => {
    mock
      .on(DescribeStacksCommand)
      .rejects(Object.assign(new Error('Stack with id PetStore-nowhere does not exist'), { name: 'ValidationError', $metadata: {} }));
    const error = await resolveBaseUrl({ kind: 'stage', stage: 'nowhere' }, cloudFormation).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/^No stack PetStore-nowhere for --stage nowhere in this region/);
  });

  it('says a stack without an ApiUrl output has none (exit status 2)', async () => {
    mock
      .on(DescribeStacksCommand)
      .resolves({ Stacks: [{ StackName: 'x', StackStatus: 'CREATE_COMPLETE', CreationTime: new Date(), Outputs: [] }] });
    const error = await resolveBaseUrl({ kind: 'stage', stage: 'staging' }, cloudFormation).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toBe('Stack PetStore-staging has no ApiUrl output.');
  });

  it.each([
    ['AccessDenied', {}, 'AWS refused to describe stack PetStore-staging (AccessDenied): check your AWS credentials'],
    ['ThrottlingException', {}, 'CloudFormation could not describe stack PetStore-staging (ThrottlingException).'],
    // A network failure, as the SDK's retries leave it.
    ['Error', { code: 'ENOTFOUND' }, 'CloudFormation could not describe stack PetStore-staging (ENOTFOUND).'],
  ])("names CloudFormation's %s in one line, never its text (exit status 2)", async (name, more, line) => {
    const text = 'User: arn:aws:sts::123456789012:assumed-role/Deployer/AKIAEXAMPLEEXAMPLE is not authorized';
    mock.on(DescribeStacksCommand).rejects(Object.assign(new Error(text), { name, $metadata: { attempts: 3 }, ...more }));
    const error = await resolveBaseUrl({ kind: 'stage', stage: 'staging' }, cloudFormation).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(UsageError);
    const message = (error as Error).message;
    expect(message).toContain(line);
    expect(message).not.toMatch(/arn:|123456789012|AKIA|not authorized/);
    expect(message).not.toContain('\n');
  });
});

describe('npm run smoke with a key that cannot be sent', () => {
  it.each([
    ['a space', `${KEY} x`],
    ['a character outside Latin-1', `${KEY}€`],
    ['a = inside', `${KEY.slice(0, 10)}=${KEY.slice(10)}`],
  ])('refuses one with %s before sending anything, in one line without it (exit status 2)', async (_, key) => {
    // Nothing answers at this address: a request sent would fail the checks, not the start.
    const error = await runSmoke(['--url', 'http://127.0.0.1:9/v1'], { PETSTORE_API_KEY: key }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(UsageError);
    const message = (error as Error).message;
    expect(message).toMatch(/^the API key cannot be sent as a bearer token \(.*\): see npm run smoke -- --help$/);
    expect(message).not.toContain(KEY.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + 8));
  });
});

describe('npm run smoke, with a key pasted in the wrong place', () => {
  it.each([
    ['an option name', (key: string) => [`--${key}`]],
    ['the host of a plain-http --url', (key: string) => ['--url', `http://${key}.example.com/v1`, '--key', KEY]],
    ['--stage', (key: string) => ['--stage', key, '--key', KEY]],
  ])('refuses it as %s in one line that holds no part of it', async (_, argv) => {
    // Every CloudFormation client, the one --stage makes included: nothing reaches AWS here.
    const mock = mockClient(CloudFormationClient);
    mock.on(DescribeStacksCommand).rejects(Object.assign(new Error('Stack does not exist'), { name: 'ValidationError', $metadata: {} }));
    const key = generateApiKey();
    try {
      for (const pasted of [key, key.slice(API_KEY_PREFIX.length)]) {
        const error = await runSmoke(argv(pasted), {}).catch((thrown: unknown) => thrown);
        expect(error).toBeInstanceOf(UsageError);
        const message = (error as Error).message.toLowerCase();
        expect(message).toContain('…');
        for (let start = API_KEY_PREFIX.length - 7; start + 8 <= key.length; start++) {
          expect(message).not.toContain(key.slice(start, start + 8).toLowerCase());
        }
      }
    } finally {
      mock.restore();
    }
  });
});
