/** The modules the deployed bundles have in place of SDK ones (infra/bundling.ts LAMBDA_ALIASES). */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defaultProvider, MISSING_CREDENTIALS_MESSAGE } from '../../shared/lambda-aliases/credential-provider';
import { EVENT_STREAMS_MISSING_MESSAGE, EventStreamSerde, eventStreamSerdeProvider } from '../../shared/lambda-aliases/event-streams';

/** The variables Lambda sets for a function's role. */
const lambdaRole = {
  AWS_ACCESS_KEY_ID: 'ASIAEXAMPLEROLEKEY',
  AWS_SECRET_ACCESS_KEY: 'role-secret',
  AWS_SESSION_TOKEN: 'role-session-token',
};

const withoutCredentials = () => {
  for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE']) vi.stubEnv(name, undefined);
};

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('defaultProvider (aliased for @aws-sdk/credential-provider-node in the Lambda bundles)', () => {
  it('returns the role credentials Lambda puts in the environment, session token included', async () => {
    for (const [name, value] of Object.entries(lambdaRole)) vi.stubEnv(name, value);
    await expect(defaultProvider()()).resolves.toMatchObject({
      accessKeyId: 'ASIAEXAMPLEROLEKEY',
      secretAccessKey: 'role-secret',
      sessionToken: 'role-session-token',
    });
  });

  it('reads them once, like the chain it replaces, and again when the SDK forces a refresh', async () => {
    for (const [name, value] of Object.entries(lambdaRole)) vi.stubEnv(name, value);
    const provider = defaultProvider();
    await provider();
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'ASIAROTATEDKEY');
    await expect(provider()).resolves.toMatchObject({ accessKeyId: 'ASIAEXAMPLEROLEKEY' });
    await expect(provider({ forceRefresh: true })).resolves.toMatchObject({ accessKeyId: 'ASIAROTATEDKEY' });
  });

  it('is what a DynamoDB client signs with, when given as its default provider', async () => {
    for (const [name, value] of Object.entries(lambdaRole)) vi.stubEnv(name, value);
    const client = new DynamoDBClient({ region: 'eu-west-1', credentialDefaultProvider: defaultProvider });
    await expect(client.config.credentials()).resolves.toMatchObject({
      accessKeyId: 'ASIAEXAMPLEROLEKEY',
      sessionToken: 'role-session-token',
    });
    client.destroy();
  });

  it('fails with a message naming the variables when they are missing', async () => {
    withoutCredentials();
    await expect(defaultProvider()()).rejects.toThrow(MISSING_CREDENTIALS_MESSAGE);
    expect(MISSING_CREDENTIALS_MESSAGE).toMatch(/AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not both set/);
  });

  it('reads no other source: a shared credentials file and profile are ignored', async () => {
    withoutCredentials();
    const dir = mkdtempSync(join(tmpdir(), 'pet-store-credentials-'));
    try {
      const file = join(dir, 'credentials');
      writeFileSync(file, '[default]\naws_access_key_id = AKIAFROMFILE\naws_secret_access_key = file-secret\n');
      vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', file);
      vi.stubEnv('AWS_PROFILE', 'default');
      await expect(defaultProvider()()).rejects.toThrow(MISSING_CREDENTIALS_MESSAGE);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('event-streams (aliased for @smithy/core/event-streams in the Lambda bundles)', () => {
  it('refuses, with the reason, if the SDK ever asks it for an event stream', () => {
    expect(() => eventStreamSerdeProvider()).toThrow(EVENT_STREAMS_MISSING_MESSAGE);
    expect(() => new EventStreamSerde()).toThrow(EVENT_STREAMS_MISSING_MESSAGE);
  });
});
