/**
 * The expiry sweep's handler: a failure is one safe log line, and still a failed invocation; once it
 * marked a key, it flushes the stage's authorizer cache (API Gateway mocked with aws-sdk-client-mock),
 * so that an answer cached before the expiry stops letting the key in.
 */
import {
  APIGatewayClient,
  DeleteApiKeyCommand,
  FlushStageAuthorizersCacheCommand,
  GetApiKeysCommand,
  NotFoundException,
} from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHandler, ExpirySweepFailed } from '../../functions/key-expiry';
import { stageSettings } from '../../infra/stages';
import { KeysNotMarked, type ApiKeyRecord, type ApiKeysRepository } from '../../shared/api-keys-repository';
import { API_STAGE_NAME_VARIABLE, REST_API_ID_VARIABLE } from '../../shared/authorizer-cache';
import { logger } from '../../shared/logger';
import { STAGE_REGIONS_VARIABLE } from '../../shared/usage-key-release';
import { apiKeysCall, authorizerCacheFlushCall, recordAwsCall } from '../support/aws-calls';
import { captureEmf } from '../support/emf';
import { context } from '../support/events';

const apiGateway = mockClient(APIGatewayClient);

beforeEach(() => {
  apiGateway.reset();
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** A keys repository whose sweep fails as the SDK does, quoting the table and the role. */
const failingKeys = (error: Error) => ({ markExpired: () => Promise.reject(error) }) as unknown as ApiKeysRepository;

describe('the expiry sweep', () => {
  it('logs a failure as one line without the table, role or stack, then fails the invocation with nothing of the error', async () => {
    const error = Object.assign(
      new Error(
        'User: arn:aws:sts::123456789012:assumed-role/PetStore-prod-KeyExpiryRole/fn is not authorized to perform: ' +
          'dynamodb:Scan on resource: arn:aws:dynamodb:eu-west-1:123456789012:table/PetStore-prod-ApiKeysTable-1A2B',
      ),
      { name: 'AccessDeniedException' },
    );
    const logged = vi.spyOn(logger, 'error').mockImplementation(() => undefined);

    const failure = await createHandler({ keys: failingKeys(error) })({}, context).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );

    expect(failure).toBeInstanceOf(ExpirySweepFailed);
    const thrown = failure as Error;
    // What the Lambda runtime would log of it: name, message and stack.
    for (const text of [thrown.message, thrown.stack ?? '']) {
      expect(text).not.toContain('123456789012');
      expect(text).not.toContain('ApiKeysTable');
      expect(text).not.toMatch(/\n\s+at /);
    }
    expect(logged.mock.calls).toEqual([
      [
        'expiry sweep failed',
        {
          errorName: 'AccessDeniedException',
          errorMessage: 'User: <arn> is not authorized to perform: dynamodb:Scan on resource: <arn>',
        },
      ],
    ]);
  });

  it('answers the ids it marked when it succeeds', async () => {
    const keys = {
      markExpired: async () => [{ keyId: 'aaaaaaaaaaaa' }],
      usageKeysToRelease: async () => [],
    } as unknown as ApiKeysRepository;
    expect(await createHandler({ keys })({}, context)).toEqual({ marked: ['aaaaaaaaaaaa'], usageKeysDeleted: [] });
  });
});

describe("the expiry sweep and the stage's authorizer cache", () => {
  const REST_API_ID = 'a1b2c3d4e5';
  /** The sweep as deployed: the stack names the stage in its environment, and the handler builds its own client. */
  /** A run in the middle of an hour: it counts no API keys. */
  const MID_HOUR = new Date('2030-01-01T12:34:00.000Z');
  const deployedSweep = (keys: Pick<ApiKeysRepository, 'markExpired'>, at = MID_HOUR) => {
    vi.stubEnv(REST_API_ID_VARIABLE, REST_API_ID);
    vi.stubEnv(API_STAGE_NAME_VARIABLE, 'v1');
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    return createHandler({ keys: { usageKeysToRelease: async () => [], ...keys } as unknown as ApiKeysRepository, now: () => at });
  };
  const marking = (...keyIds: string[]) => ({
    markExpired: async () => keyIds.map((keyId) => ({ keyId }) as ApiKeyRecord),
    usageKeysToRelease: async () => [],
  });
  const flushes = () => apiGateway.commandCalls(FlushStageAuthorizersCacheCommand).map((call) => call.args[0].input);

  it('flushes it once after marking keys expired: FlushStageAuthorizersCache on the stage the stack names', async () => {
    apiGateway.on(FlushStageAuthorizersCacheCommand).resolves({});

    expect(await deployedSweep(marking('aaaaaaaaaaaa', 'bbbbbbbbbbbb'))({}, context)).toEqual({
      marked: ['aaaaaaaaaaaa', 'bbbbbbbbbbbb'],
      usageKeysDeleted: [],
    });

    expect(flushes()).toEqual([{ restApiId: REST_API_ID, stageName: 'v1' }]);
    for (const input of flushes()) recordAwsCall(authorizerCacheFlushCall('keyExpiry', input));
  });

  it('flushes nothing when it marked nothing', async () => {
    expect(await deployedSweep(marking())({}, context)).toEqual({ marked: [], usageKeysDeleted: [] });
    expect(flushes()).toEqual([]);
  });

  it('flushes nothing where no stage is named (locally, where the local gateway follows the keys table)', async () => {
    expect(await createHandler({ keys: marking('aaaaaaaaaaaa') as unknown as ApiKeysRepository })({}, context)).toEqual({
      marked: ['aaaaaaaaaaaa'],
      usageKeysDeleted: [],
    });
    expect(flushes()).toEqual([]);
  });

  it('fails the run in one safe line when API Gateway refuses the flush; the keys stay marked', async () => {
    apiGateway
      .on(FlushStageAuthorizersCacheCommand)
      .rejects(
        Object.assign(
          new Error(`User: arn:aws:sts::123456789012:assumed-role/KeyExpiryRole/fn is not authorized to perform: apigateway:DELETE`),
          { name: 'AccessDeniedException' },
        ),
      );
    const logged = vi.spyOn(logger, 'error').mockImplementation(() => undefined);

    const failure = await deployedSweep(marking('aaaaaaaaaaaa'))({}, context).catch((thrown: unknown) => thrown);

    expect(failure).toBeInstanceOf(ExpirySweepFailed);
    expect(logged.mock.calls).toEqual([
      [
        'expiry sweep failed',
        {
          errorName: 'AuthorizerCacheNotFlushed',
          errorMessage:
            "the keys marked expired are refused within the stage's authorizer cache TTL: API Gateway did not flush the cache (AccessDeniedException)",
        },
      ],
    ]);
  });

  it('flushes for the keys it marked when others could not be marked, then fails the run', async () => {
    apiGateway.on(FlushStageAuthorizersCacheCommand).resolves({});
    const notMarked = new KeysNotMarked(
      [{ keyId: 'bbbbbbbbbbbb', reason: 'ProvisionedThroughputExceededException' }],
      [{ keyId: 'aaaaaaaaaaaa' } as ApiKeyRecord],
    );
    const logged = vi.spyOn(logger, 'error').mockImplementation(() => undefined);

    const failure = await deployedSweep({ markExpired: () => Promise.reject(notMarked) })({}, context).catch((thrown: unknown) => thrown);

    expect(failure).toBeInstanceOf(ExpirySweepFailed);
    expect(flushes()).toEqual([{ restApiId: REST_API_ID, stageName: 'v1' }]);
    expect(logged.mock.calls[0]?.[1]).toMatchObject({ errorName: 'KeysNotMarked' });
  });
});

describe("the expiry sweep counts the account's API keys once an hour (API Gateway mocked with aws-sdk-client-mock)", () => {
  const saved = process.env.POWERTOOLS_METRICS_DISABLED;
  afterEach(() => {
    process.env.POWERTOOLS_METRICS_DISABLED = saved;
  });
  const sweepAt = (at: string, event: { time?: string } = {}) => {
    vi.stubEnv(REST_API_ID_VARIABLE, 'a1b2c3d4e5');
    vi.stubEnv(API_STAGE_NAME_VARIABLE, 'v1');
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    const keys = { markExpired: async () => [], usageKeysToRelease: async () => [] } as unknown as ApiKeysRepository;
    return createHandler({ keys, now: () => new Date(at) })(event as Record<string, never>, context);
  };

  it('at the top of the hour: GetApiKeys in pages of 500, every page, and the count published as the UsageKeys metric', async () => {
    apiGateway
      .on(GetApiKeysCommand, { position: undefined })
      .resolves({ items: Array.from({ length: 500 }, (_, index) => ({ id: `ak-${index}` })), position: 'page-2' })
      .on(GetApiKeysCommand, { position: 'page-2' })
      .resolves({ items: [{ id: 'ak-500' }, { id: 'ak-501' }] });
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    const written = captureEmf();

    expect(await sweepAt('2030-01-01T13:00:07.000Z')).toEqual({ marked: [], usageKeysDeleted: [], usageKeys: 502 });

    // Two pages (the SDK's paginator reuses one input object, so each call's position is not kept apart).
    expect(apiGateway.commandCalls(GetApiKeysCommand).map((call) => call.args[0].input.limit)).toEqual([500, 500]);
    recordAwsCall(apiKeysCall('keyExpiry', {}));
    expect(written()).toEqual([expect.objectContaining({ names: ['UsageKeys'], values: expect.objectContaining({ UsageKeys: 502 }) })]);
  });

  it('in any other minute: no GetApiKeys call, no metric', async () => {
    expect(await sweepAt('2030-01-01T13:01:07.000Z')).toEqual({ marked: [], usageKeysDeleted: [] });
    expect(apiGateway.commandCalls(GetApiKeysCommand)).toEqual([]);
  });

  it("counts in the run scheduled for the top of the hour, by the schedule's time, even when it starts a minute late", async () => {
    apiGateway.on(GetApiKeysCommand).resolves({ items: [{ id: 'ak-0' }] });
    expect(await sweepAt('2030-01-01T13:01:02.000Z', { time: '2030-01-01T13:00:00Z' })).toMatchObject({ usageKeys: 1 });
    expect(await sweepAt('2030-01-01T13:00:02.000Z', { time: '2030-01-01T12:59:00Z' })).not.toHaveProperty('usageKeys');
  });

  it('finishes its run when API Gateway refuses the count: the count is missing, the run does not fail', async () => {
    apiGateway.on(GetApiKeysCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'TooManyRequestsException' }));
    expect(await sweepAt('2030-01-01T13:00:07.000Z')).toEqual({ marked: [], usageKeysDeleted: [] });
  });
});

describe('the deployed expiry sweep deletes usage keys with DeleteApiKey (API Gateway mocked with aws-sdk-client-mock)', () => {
  const usageKey = { usageKeyId: 'ak-ended', usageKey: 'ak-ended-value-0123456789abcdef0123', usageKeyBinding: '' };
  /** A repository with one revoked key to release; the binding is the one written for it. */
  const releasing = async () => {
    const { usageKeyBinding } = await import('../../shared/plan-policy');
    const record = {
      keyHash: 'a'.repeat(64),
      keyId: 'aaaaaaaaaaaa',
      revokedAt: '2030-01-01T00:00:00.000Z',
      ...usageKey,
      usageKeyBinding: usageKeyBinding('a'.repeat(64), usageKey.usageKeyId, usageKey.usageKey),
    } as unknown as ApiKeyRecord;
    const recorded: string[] = [];
    const keys = {
      markExpired: async () => [],
      usageKeysToRelease: async () => [record],
      othersSharingUsageKey: async () => [],
      keepUsageKey: async () => undefined,
      recordUsageKeyDeleted: async (released: ApiKeyRecord) => {
        recorded.push(released.keyId);
      },
    } as unknown as ApiKeysRepository;
    vi.stubEnv(REST_API_ID_VARIABLE, 'a1b2c3d4e5');
    vi.stubEnv(API_STAGE_NAME_VARIABLE, 'v1');
    vi.stubEnv('AWS_REGION', 'eu-west-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    return { sweep: createHandler({ keys, now: () => new Date('2030-01-01T12:34:00.000Z') }), recorded };
  };

  it('sends DeleteApiKey for the usage key, and records the deletion', async () => {
    apiGateway.on(DeleteApiKeyCommand).resolves({});
    const { sweep, recorded } = await releasing();

    expect(await sweep({}, context)).toEqual({ marked: [], usageKeysDeleted: ['ak-ended'] });

    const deletes = apiGateway.commandCalls(DeleteApiKeyCommand).map((call) => call.args[0].input);
    expect(deletes).toEqual([{ apiKey: 'ak-ended' }]);
    expect(recorded).toEqual(['aaaaaaaaaaaa']);
    for (const input of deletes) recordAwsCall(apiKeysCall('keyExpiry', input));
  });

  it('takes an API key already gone (NotFoundException) as deleted', async () => {
    apiGateway.on(DeleteApiKeyCommand).rejects(new NotFoundException({ message: 'Invalid API Key identifier specified', $metadata: {} }));
    const { sweep, recorded } = await releasing();

    expect(await sweep({}, context)).toEqual({ marked: [], usageKeysDeleted: ['ak-ended'] });
    expect(recorded).toEqual(['aaaaaaaaaaaa']);
  });

  it('fails the run in one safe line when API Gateway refuses the delete, recording nothing, so the next sweep tries again', async () => {
    apiGateway.on(DeleteApiKeyCommand).rejects(Object.assign(new Error('Rate exceeded'), { name: 'TooManyRequestsException' }));
    const logged = vi.spyOn(logger, 'error').mockImplementation(() => undefined);
    const { sweep, recorded } = await releasing();

    expect(await sweep({}, context).catch((thrown: unknown) => thrown)).toBeInstanceOf(ExpirySweepFailed);
    expect(recorded).toEqual([]);
    expect(logged.mock.calls[0]?.[1]).toMatchObject({
      errorName: 'UsageKeysNotDeleted',
      errorMessage: 'the usage keys of 1 key(s) not deleted: aaaaaaaaaaaa (TooManyRequestsException)',
    });
  });
});

describe('in a stage of several regions, the sweep deletes and counts in each (API Gateway mocked with aws-sdk-client-mock)', () => {
  const regions = stageSettings('global').regions ?? [];
  const [home = '', ...others] = regions;
  const saved = process.env.POWERTOOLS_METRICS_DISABLED;
  afterEach(() => {
    process.env.POWERTOOLS_METRICS_DISABLED = saved;
  });
  /** The sweep as the home region's stack deploys it: the stage's regions in STAGE_REGIONS, this region's client its own. */
  const deployed = (keys: Partial<ApiKeysRepository>, at: string) => {
    vi.stubEnv(REST_API_ID_VARIABLE, 'a1b2c3d4e5');
    vi.stubEnv(API_STAGE_NAME_VARIABLE, 'v1');
    vi.stubEnv(STAGE_REGIONS_VARIABLE, regions.join(','));
    vi.stubEnv('AWS_REGION', home);
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIDEXAMPLE');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'secret');
    return createHandler({
      keys: { markExpired: async () => [], usageKeysToRelease: async () => [], ...keys } as unknown as ApiKeysRepository,
      now: () => new Date(at),
    });
  };
  /** Each call's region (of the client it was sent with) and the API key it names. */
  const regionsOf = async (
    calls: ReadonlyArray<{ readonly thisValue: unknown; readonly args: ReadonlyArray<{ readonly input: object }> }>,
  ) =>
    Promise.all(
      calls.map(async (call) => {
        const client = call.thisValue as APIGatewayClient;
        return [await client.config.region(), (call.args[0]?.input as { apiKey?: string } | undefined)?.apiKey] as const;
      }),
    );

  it("counts every region's API keys with that region's client, and publishes UsageKeys by service and Region for each", async () => {
    apiGateway.on(GetApiKeysCommand).callsFake(async (_input: unknown, clientOf: () => APIGatewayClient) => {
      const region = await clientOf().config.region();
      return { items: Array.from({ length: regions.indexOf(region) + 1 }, (_, index) => ({ id: `ak-${index}` })) };
    });
    process.env.POWERTOOLS_METRICS_DISABLED = 'false';
    const written = captureEmf();

    const result = await deployed({}, '2030-01-01T13:00:07.000Z')({}, context);

    const expected = Object.fromEntries(regions.map((region, index) => [region, index + 1]));
    expect(result).toEqual({ marked: [], usageKeysDeleted: [], usageKeysByRegion: expected });
    const counted = await regionsOf(apiGateway.commandCalls(GetApiKeysCommand));
    expect(counted.map(([region]) => region).sort()).toEqual([...regions].sort());
    for (const [region] of counted) recordAwsCall(apiKeysCall('keyExpiry', {}, region));
    expect(written()).toEqual(
      regions.map((region) => ({
        namespace: 'PetStore',
        dimensions: [['service', 'Region']],
        names: ['UsageKeys'],
        values: expect.objectContaining({ Region: region, UsageKeys: expected[region] }) as unknown,
      })),
    );
  });

  it('publishes the regions it could count when one refuses, and does not fail the run', async () => {
    const [refusing = ''] = others;
    apiGateway.on(GetApiKeysCommand).callsFake(async (_input: unknown, clientOf: () => APIGatewayClient) => {
      if ((await clientOf().config.region()) === refusing)
        throw Object.assign(new Error('Rate exceeded'), { name: 'TooManyRequestsException' });
      return { items: [{ id: 'ak-0' }] };
    });
    const result = await deployed({}, '2030-01-01T13:00:07.000Z')({}, context);
    expect(result.usageKeysByRegion).toEqual(
      Object.fromEntries(regions.filter((region) => region !== refusing).map((region) => [region, 1])),
    );
  });

  it("deletes a released usage key's API key in every region, each with its region's client, and records it once all are gone", async () => {
    const { usageKeyBinding } = await import('../../shared/plan-policy');
    const regionUsageKeyIds = Object.fromEntries(others.map((region) => [region, `ak-${region}`]));
    const value = 'v'.repeat(40);
    const record = {
      keyHash: 'b'.repeat(64),
      keyId: 'bbbbbbbbbbbb',
      revokedAt: '2030-01-01T00:00:00.000Z',
      usageKeyId: `ak-${home}`,
      usageKey: value,
      regionUsageKeyIds,
      usageKeyBinding: usageKeyBinding('b'.repeat(64), `ak-${home}`, value, regionUsageKeyIds),
    } as unknown as ApiKeyRecord;
    const recorded: string[] = [];
    apiGateway.on(DeleteApiKeyCommand).resolves({});

    const result = await deployed(
      {
        usageKeysToRelease: async () => [record],
        othersSharingUsageKey: async () => [],
        keepUsageKey: async () => undefined,
        recordUsageKeyDeleted: async (released: ApiKeyRecord) => {
          recorded.push(released.keyId);
        },
      },
      '2030-01-01T12:34:00.000Z',
    )({}, context);

    expect(result).toEqual({ marked: [], usageKeysDeleted: [`ak-${home}`] });
    const deletes = await regionsOf(apiGateway.commandCalls(DeleteApiKeyCommand));
    expect([...deletes].sort()).toEqual(regions.map((region) => [region, `ak-${region}`]).sort());
    expect(recorded).toEqual(['bbbbbbbbbbbb']);
    for (const [region, apiKey] of deletes) recordAwsCall(apiKeysCall('keyExpiry', { apiKey }, region));
  });
});
