/**
 * The tables' deletion protection (infra/constructs/table-protection.ts), as CloudFormation drives
 * it: each protection resource of the synthesized stacks handed, as CloudFormation's Create,
 * Update and Delete events, to the handler the stack deploys for it (CDK's AwsCustomResource
 * provider), with DynamoDB's control plane mocked. What it sends DynamoDB, in which region, and what
 * it answers CloudFormation. The deploy rules (test/infra/deploy-rules.test.ts) check that every
 * replica of a kept stage has one, and that it runs last.
 */
import {
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  UpdateTableCommand,
  type TableDescription,
  type UpdateTableCommandInput,
} from '@aws-sdk/client-dynamodb';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AttributeType, StreamViewType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { mockClient, type AwsClientStub } from 'aws-sdk-client-mock';
import https from 'node:https';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  PROTECTION_OUTPUT_PATH,
  TABLE_PROTECTION_RESOURCE_TYPE,
  TABLE_TEMPLATE_PROPERTY,
  TableProtection,
} from '../../infra/constructs/table-protection';
import { homeRegionOf, stageSettings } from '../../infra/stages';
import { deployedTableName } from '../../shared/stack';
import { tableDefinitions } from '../../shared/tables';
import { templateResolver, type CfnTemplate } from '../support/iam-simulation';
import { createTestTables } from '../support/tables';
import { multiRegionStages, resourcesOf, synthStage, synthStageIn, TEST_ACCOUNT, TEST_REGION, type SynthesizedStage } from './synth';

/** CloudFormation's answer to a request, as the handler PUTs it to the request's presigned URL. */
interface Answer {
  readonly Status: 'SUCCESS' | 'FAILED';
  readonly Reason?: string;
  readonly PhysicalResourceId: string;
  readonly Data?: Record<string, unknown>;
}

type RequestType = 'Create' | 'Update' | 'Delete';

/** The handler the stack deploys as every AwsCustomResource's function (its Code asset). */
const handlerModule = join(
  dirname(createRequire(import.meta.url).resolve('aws-cdk-lib/package.json')),
  'custom-resource-handlers/dist/custom-resources/aws-custom-resource-handler/index.js',
);
const { handler } = createRequire(import.meta.url)(handlerModule) as {
  handler: (event: Record<string, unknown>, context: { logStreamName: string }) => Promise<void>;
};

let answers: Answer[] = [];
let logged: string[] = [];

beforeEach(() => {
  answers = [];
  logged = [];
  // The answer goes to the presigned URL with https.request: kept here instead.
  vi.spyOn(https, 'request').mockImplementation(((_options: unknown, respond: (response: unknown) => void) => {
    const body: string[] = [];
    return {
      on: () => undefined,
      write: (chunk: string) => body.push(chunk),
      end: () => {
        answers.push(JSON.parse(body.join('')) as Answer);
        respond({});
      },
    };
  }) as unknown as typeof https.request);
  vi.spyOn(console, 'log').mockImplementation((...line: unknown[]) => {
    logged.push(line.map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join(' '));
  });
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** The protection resources of a synthesized stack, with their properties as CloudFormation passes them (resolved, as strings). */
const protectionsOf = ({ template, stack }: { readonly template: Template; readonly stack: Stack }) => {
  const resolver = templateResolver(template.toJSON() as CfnTemplate, stack.region);
  return resourcesOf(template, TABLE_PROTECTION_RESOURCE_TYPE).map(({ logicalId, properties }) => ({
    logicalId,
    properties: Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, String(resolver.resolve(value))])),
  }));
};

/** Hands the handler CloudFormation's request of this type for the resource; its answer. */
const request = async (requestType: RequestType, logicalId: string, properties: Record<string, string>): Promise<Answer> => {
  await handler(
    {
      RequestType: requestType,
      ResponseURL: 'https://cloudformation-custom-resource-response.invalid/answer',
      StackId: `arn:aws:cloudformation:${TEST_REGION}:${TEST_ACCOUNT}:stack/fixture/0`,
      RequestId: `${requestType}-${logicalId}`,
      LogicalResourceId: logicalId,
      ResourceType: TABLE_PROTECTION_RESOURCE_TYPE,
      ...(requestType === 'Create' ? {} : { PhysicalResourceId: 'the-id-it-answered' }),
      // Copies: the handler parses the calls in place.
      ResourceProperties: { ...properties },
      ...(requestType === 'Update' ? { OldResourceProperties: { ...properties } } : {}),
    },
    { logStreamName: 'fixture-log-stream' },
  );
  const [answer, ...more] = answers.splice(0);
  expect(more).toEqual([]);
  if (!answer) throw new Error('The handler answered nothing');
  return answer;
};

/** What the handler sent DynamoDB: each UpdateTable's input, with the region of the client it was sent with, in a stable order. */
const sentTo = async (dynamodb: AwsClientStub<DynamoDBClient>) =>
  sorted(
    await Promise.all(
      dynamodb.commandCalls(UpdateTableCommand).map(async (call) => ({
        ...call.args[0].input,
        region: await (call.thisValue as DynamoDBClient).config.region(),
      })),
    ),
  );
const sorted = <T>(values: readonly T[]): T[] => [...values].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

/** A part of each index's ARN in the description below: what the log must not show. */
const INDEX_ARN_PART = 'index/fixture-index-';

/** A description of a global table as big as DynamoDB gives one: every replica's and index's settings. */
const largeDescription = (tableName: string): TableDescription => ({
  TableName: tableName,
  TableStatus: 'ACTIVE',
  DeletionProtectionEnabled: true,
  Replicas: Array.from({ length: 3 }, (_, index) => ({
    RegionName: `fixture-region-${index}`,
    ReplicaStatus: 'ACTIVE',
    GlobalSecondaryIndexes: Array.from({ length: 8 }, (_unused, position) => ({ IndexName: `index-${position}` })),
  })),
  GlobalSecondaryIndexes: Array.from({ length: 8 }, (_, position) => ({
    IndexName: `index-${position}`,
    IndexArn: `arn:aws:dynamodb:${TEST_REGION}:${TEST_ACCOUNT}:table/${tableName}/${INDEX_ARN_PART}${position}`,
    IndexStatus: 'ACTIVE',
    KeySchema: [{ AttributeName: `attribute-${position}`, KeyType: 'HASH' }],
    Projection: { ProjectionType: 'ALL' },
  })),
});

/** The stage in several regions, in its home region (whose stack defines every table), and prod in its one region. */
const [MULTI_REGION_STAGE = ''] = multiRegionStages();
const kept: Array<[string, () => SynthesizedStage, readonly string[]]> = [
  ['prod', () => synthStage('prod'), [TEST_REGION]],
  [
    `${MULTI_REGION_STAGE} in its home region`,
    () => synthStageIn(MULTI_REGION_STAGE, homeRegionOf(stageSettings(MULTI_REGION_STAGE)) ?? ''),
    stageSettings(MULTI_REGION_STAGE).regions ?? [],
  ],
];

describe.each(kept)('the table protection of %s', (_name, synthesize, regions) => {
  // DynamoDB's control plane, in each region.
  let dynamodb!: AwsClientStub<DynamoDBClient>;
  beforeEach(() => {
    dynamodb = mockClient(DynamoDBClient);
  });
  afterEach(() => dynamodb.restore());
  const synthesized = synthesize();
  const protections = protectionsOf(synthesized);
  const replicas = regions.flatMap((region) =>
    Object.values(tableDefinitions).map((table) => ({ TableName: deployedTableName(synthesized.stack.stage, table), region })),
  );

  it('has one resource per table and region of its replicas', () => {
    expect(regions.length).toBeGreaterThan(0);
    expect(protections).toHaveLength(replicas.length);
  });

  it.each(['Create', 'Update'] as const)(
    "on %s, turns on each replica's deletion protection, in that replica's region, and answers CloudFormation in a few bytes",
    async (requestType) => {
      dynamodb
        .on(UpdateTableCommand)
        .callsFake((input: UpdateTableCommandInput) => ({ TableDescription: largeDescription(input.TableName ?? '') }));
      for (const { logicalId, properties } of protections) {
        const answer = await request(requestType, logicalId, properties);
        expect(answer, logicalId).toMatchObject({ Status: 'SUCCESS', Data: { [PROTECTION_OUTPUT_PATH]: true } });
        // CloudFormation takes 4,096 bytes at most from a custom resource.
        expect(JSON.stringify(answer).length).toBeLessThan(1024);
      }
      expect(await sentTo(dynamodb)).toEqual(
        sorted(replicas.map(({ TableName, region }) => ({ TableName, DeletionProtectionEnabled: true, region }))),
      );
      // The table's description stays out of the function's log.
      expect(logged.join('\n')).not.toContain(INDEX_ARN_PART);
    },
  );

  it('on Create, fails when DynamoDB refuses, so that the deploy rolls back rather than end with a table unprotected', async () => {
    dynamodb.on(UpdateTableCommand).rejects(Object.assign(new Error('Table is being updated'), { name: 'ResourceInUseException' }));
    const [first] = protections;
    if (!first) throw new Error('no protection');
    expect(await request('Create', first.logicalId, first.properties)).toMatchObject({
      Status: 'FAILED',
      Reason: 'Table is being updated',
    });
  });

  it('on Delete (only ever sent by the rollback of the operation that created it), turns the protection off, and succeeds whatever DynamoDB answers', async () => {
    // The first call turns it off; every later one is refused (a create that failed on its permissions, say).
    dynamodb
      .on(UpdateTableCommand)
      .resolvesOnce({ TableDescription: { DeletionProtectionEnabled: false } })
      .rejects(Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' }));
    for (const { logicalId, properties } of protections) {
      expect(await request('Delete', logicalId, properties), logicalId).toMatchObject({ Status: 'SUCCESS' });
    }
    expect(await sentTo(dynamodb)).toEqual(
      sorted(replicas.map(({ TableName, region }) => ({ TableName, DeletionProtectionEnabled: false, region }))),
    );
  });
});

describe('a table protection', () => {
  /** The protection of one table, in a stack of its own, as the table is defined. */
  const protectionOf = (stream?: StreamViewType, tableName = 'fixture-table') => {
    const stack = new Stack(new App(), 'Fixture', { env: { account: TEST_ACCOUNT, region: TEST_REGION } });
    const table = new TableV2(stack, 'FixtureTable', {
      tableName,
      partitionKey: { name: 'id', type: AttributeType.STRING },
      ...(stream ? { dynamoStream: stream } : {}),
    });
    new TableProtection(stack, 'Protection', {
      tables: [{ tableName, table }],
      regions: [TEST_REGION],
      functionName: 'fixture-protection',
      logRetention: RetentionDays.ONE_DAY,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const synthesized = { stack, template: Template.fromStack(stack) };
    const [protection] = protectionsOf(synthesized);
    if (!protection) throw new Error('no protection');
    return protection;
  };

  it('against DynamoDB Local: protects the table on create, again on an update (a protected table takes it), and on delete lets the rollback delete the table', async () => {
    const { endpoint, client, pets: tableName } = await createTestTables(['pets']);
    // The handler's own client, as Lambda runs it, sent to the run's DynamoDB Local.
    vi.stubEnv('AWS_ENDPOINT_URL_DYNAMODB', endpoint);
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
    const { logicalId, properties } = protectionOf(undefined, tableName);
    const protectedNow = async () =>
      (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.DeletionProtectionEnabled;

    expect(await protectedNow()).toBeFalsy();
    expect(await request('Create', logicalId, properties)).toMatchObject({ Status: 'SUCCESS' });
    expect(await protectedNow()).toBe(true);
    await expect(client.send(new DeleteTableCommand({ TableName: tableName }))).rejects.toThrow();
    expect(await request('Update', logicalId, properties)).toMatchObject({ Status: 'SUCCESS' });
    expect(await protectedNow()).toBe(true);

    expect(await request('Delete', logicalId, properties)).toMatchObject({ Status: 'SUCCESS' });
    expect(await protectedNow()).toBe(false);
    await client.send(new DeleteTableCommand({ TableName: tableName }));
  });

  it("changes with its table's template, so CloudFormation runs it again after the table's update; its calls stay the same", () => {
    const before = protectionOf().properties;
    expect(protectionOf().properties).toEqual(before);
    const after = protectionOf(StreamViewType.NEW_AND_OLD_IMAGES).properties;
    expect(after[TABLE_TEMPLATE_PROPERTY]).not.toEqual(before[TABLE_TEMPLATE_PROPERTY]);
    for (const call of ['Create', 'Update', 'Delete']) expect(after[call]).toEqual(before[call]);
  });
});
