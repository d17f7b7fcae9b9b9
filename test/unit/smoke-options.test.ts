/**
 * The command line of `npm run smoke`: the deployment (--url, or --stage's ApiUrl output from a
 * CloudFormation mocked with aws-sdk-client-mock), the key, and one-line usage errors that never
 * repeat the key.
 */
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../tools/cli';
import { parseSmokeCommand, resolveBaseUrl } from '../../tools/smoke/options';

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
    });
    expect(parseSmokeCommand(['--help'], {})).toBeUndefined();
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
  ])('refuses %s in one line', (_, args, message) => {
    expect(usageErrorOf(args)).toMatch(message);
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

  it('says a stack without an ApiUrl output has none', async () => {
    mock
      .on(DescribeStacksCommand)
      .resolves({ Stacks: [{ StackName: 'x', StackStatus: 'CREATE_COMPLETE', CreationTime: new Date(), Outputs: [] }] });
    await expect(resolveBaseUrl({ kind: 'stage', stage: 'staging' }, cloudFormation)).rejects.toThrow(
      'Stack PetStore-staging has no ApiUrl output.',
    );
  });
});
