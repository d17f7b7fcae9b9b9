/**
 * The tables' deletion protection (infra/constructs/table-protection.ts), as CloudFormation drives
 * it: each protection resource of the synthesized stacks handed, as CloudFormation's Create,
 * Update and Delete events, to the function the stack deploys for it (functions/table-protection.ts),
 * with DynamoDB's control plane mocked, then against DynamoDB Local. What it sends DynamoDB, in which
 * region, and what it answers CloudFormation. The deploy rules (test/infra/deploy-rules.test.ts)
 * check that every replica of a kept stage has one, and that it runs last.
 */
import {
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  UpdateTableCommand,
  type DescribeTableCommandInput,
  type TableDescription,
} from '@aws-sdk/client-dynamodb';
import type { CloudFormationCustomResourceEvent, CloudFormationCustomResourceResponse } from 'aws-lambda';
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AttributeType, StreamViewType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { mockClient, type AwsClientStub } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createHandler, type TableProtectionDependencies } from '../../functions/table-protection';
import { TableProtection } from '../../infra/constructs/table-protection';
import { homeRegionOf, stageSettings } from '../../infra/stages';
import { logger } from '../../shared/logger';
import { deployedTableName } from '../../shared/stack';
import {
  originOf,
  PROTECTION_BUDGET_SECONDS,
  TABLE_PROTECTION_RESOURCE_TYPE,
  TABLE_TEMPLATE_PROPERTY,
} from '../../shared/table-protection';
import { tableDefinitions } from '../../shared/tables';
import { templateResolver, type CfnTemplate } from '../support/iam-simulation';
import { createTestTables } from '../support/tables';
import { multiRegionStages, resourcesOf, synthStage, synthStageIn, TEST_ACCOUNT, TEST_REGION, type SynthesizedStage } from './synth';

type RequestType = 'Create' | 'Update' | 'Delete';

/** The protection resources of a synthesized stack, with their properties as CloudFormation passes them (resolved, as strings). */
const protectionsOf = ({ template, stack }: { readonly template: Template; readonly stack: Stack }) => {
  const resolver = templateResolver(template.toJSON() as CfnTemplate, stack.region);
  return resourcesOf(template, TABLE_PROTECTION_RESOURCE_TYPE).map(({ logicalId, properties }) => ({
    logicalId,
    properties: Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, String(resolver.resolve(value))])),
  }));
};

/**
 * The function with CloudFormation's side stood in: its answers kept, its waits recorded and
 * passed on a clock of their own (no test sleeps), DynamoDB's clients the given ones.
 */
const protectionFunction = (dependencies: Pick<TableProtectionDependencies, 'clientFor'> = {}) => {
  const answers: CloudFormationCustomResourceResponse[] = [];
  const waits: number[] = [];
  let clock = 0;
  const handler = createHandler({
    ...dependencies,
    now: () => clock,
    wait: async (milliseconds) => {
      waits.push(milliseconds);
      clock += milliseconds;
    },
    respond: async (_url, body) => {
      answers.push(JSON.parse(body) as CloudFormationCustomResourceResponse);
    },
  });
  /** Hands the function CloudFormation's request of this type for the resource; its answer. */
  const request = async (
    requestType: RequestType,
    logicalId: string,
    properties: Record<string, string>,
    physicalResourceId?: string,
  ): Promise<CloudFormationCustomResourceResponse> => {
    await handler({
      RequestType: requestType,
      ServiceToken: `arn:aws:lambda:${TEST_REGION}:${TEST_ACCOUNT}:function:fixture-tableProtection`,
      ResponseURL: 'https://cloudformation-custom-resource-response.invalid/answer',
      StackId: `arn:aws:cloudformation:${TEST_REGION}:${TEST_ACCOUNT}:stack/fixture/0`,
      RequestId: `${requestType}-${logicalId}`,
      LogicalResourceId: logicalId,
      ResourceType: TABLE_PROTECTION_RESOURCE_TYPE,
      ...(requestType === 'Create' ? {} : { PhysicalResourceId: physicalResourceId ?? '' }),
      ResourceProperties: { ServiceToken: 'token', ...properties },
      ...(requestType === 'Update' ? { OldResourceProperties: { ...properties } } : {}),
    } as CloudFormationCustomResourceEvent);
    const [answer, ...more] = answers.splice(0);
    expect(more).toEqual([]);
    if (!answer) throw new Error('The function answered nothing');
    return answer;
  };
  return { request, waits, elapsed: () => clock };
};

let logged: string[] = [];
beforeEach(() => {
  logged = [];
  for (const level of ['info', 'error'] as const)
    vi.spyOn(logger, level).mockImplementation((...line: unknown[]) => {
      logged.push(JSON.stringify(line));
    });
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** What the function sent DynamoDB: each UpdateTable's input, with the region of the client it was sent with, in a stable order. */
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

/** A description of a settled global table, as big as DynamoDB gives one, protected or not. */
const description = (tableName: string, deletionProtection: boolean, changes: Partial<TableDescription> = {}): TableDescription => ({
  TableName: tableName,
  TableStatus: 'ACTIVE',
  DeletionProtectionEnabled: deletionProtection,
  Replicas: Array.from({ length: 3 }, (_, index) => ({ RegionName: `fixture-region-${index}`, ReplicaStatus: 'ACTIVE' })),
  GlobalSecondaryIndexes: Array.from({ length: 4 }, (_, position) => ({ IndexName: `index-${position}`, IndexStatus: 'ACTIVE' })),
  ...changes,
});

const inUse = () => Object.assign(new Error('Attempt to change a resource which is still in use'), { name: 'ResourceInUseException' });

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

  it("on Create, turns on each replica's deletion protection in that replica's region; the rollback's Delete turns it off again", async () => {
    const protectedNow = new Set<string>();
    dynamodb.on(DescribeTableCommand).callsFake(async (input: DescribeTableCommandInput) => ({
      Table: description(input.TableName ?? '', protectedNow.has(input.TableName ?? '')),
    }));
    dynamodb.on(UpdateTableCommand).resolves({});
    const { request } = protectionFunction();
    const created = [];
    for (const { logicalId, properties } of protections) {
      const answer = await request('Create', logicalId, properties);
      expect(answer, logicalId).toMatchObject({ Status: 'SUCCESS' });
      expect(originOf(answer.PhysicalResourceId), logicalId).toBe('turned on');
      // CloudFormation takes 4,096 bytes at most from a custom resource.
      expect(JSON.stringify(answer).length).toBeLessThan(1024);
      created.push({ logicalId, properties, physicalResourceId: answer.PhysicalResourceId });
    }
    expect(await sentTo(dynamodb)).toEqual(
      sorted(replicas.map(({ TableName, region }) => ({ TableName, DeletionProtectionEnabled: true, region }))),
    );

    dynamodb.resetHistory();
    dynamodb.on(DescribeTableCommand).callsFake(async (input: DescribeTableCommandInput) => ({
      Table: description(input.TableName ?? '', true),
    }));
    for (const { logicalId, properties, physicalResourceId } of created)
      expect(await request('Delete', logicalId, properties, physicalResourceId), logicalId).toMatchObject({ Status: 'SUCCESS' });
    expect(await sentTo(dynamodb)).toEqual(
      sorted(replicas.map(({ TableName, region }) => ({ TableName, DeletionProtectionEnabled: false, region }))),
    );
    // No table's name in the function's log.
    for (const { TableName } of replicas) expect(logged.join('\n')).not.toContain(TableName);
  });

  it('on a Create over tables protected before (a running stage protected by hand), sends nothing, and the rollback leaves them protected', async () => {
    dynamodb.on(DescribeTableCommand).callsFake(async (input: DescribeTableCommandInput) => ({
      Table: description(input.TableName ?? '', true),
    }));
    dynamodb.on(UpdateTableCommand).resolves({});
    const { request } = protectionFunction();
    for (const { logicalId, properties } of protections) {
      const created = await request('Create', logicalId, properties);
      expect(created, logicalId).toMatchObject({ Status: 'SUCCESS' });
      expect(originOf(created.PhysicalResourceId), logicalId).toBe('on before');
      // A later resource of the chain fails: CloudFormation deletes this one.
      expect(await request('Delete', logicalId, properties, created.PhysicalResourceId), logicalId).toMatchObject({ Status: 'SUCCESS' });
    }
    expect(dynamodb.commandCalls(UpdateTableCommand)).toEqual([]);
  });

  it('on Update, turns the protection on again where it is off, under the same id', async () => {
    dynamodb.on(DescribeTableCommand).callsFake(async (input: DescribeTableCommandInput) => ({
      Table: description(input.TableName ?? '', false),
    }));
    dynamodb.on(UpdateTableCommand).resolves({});
    const { request } = protectionFunction();
    for (const { logicalId, properties } of protections) {
      const id = `${properties.TableName} in ${properties.Region}: on before`;
      expect(await request('Update', logicalId, properties, id), logicalId).toMatchObject({ Status: 'SUCCESS', PhysicalResourceId: id });
    }
    expect(await sentTo(dynamodb)).toEqual(
      sorted(replicas.map(({ TableName, region }) => ({ TableName, DeletionProtectionEnabled: true, region }))),
    );
  });
});

describe('the table protection function', () => {
  let dynamodb!: AwsClientStub<DynamoDBClient>;
  beforeEach(() => {
    dynamodb = mockClient(DynamoDBClient);
  });
  afterEach(() => dynamodb.restore());
  const properties = { TableName: 'fixture-table', Region: TEST_REGION };

  it('waits while the table, a replica or an index is still changing, and retries ResourceInUse and a role not yet effective, then protects it', async () => {
    dynamodb
      .on(DescribeTableCommand)
      .rejectsOnce(Object.assign(new Error('not authorized'), { name: 'AccessDeniedException' }))
      .resolvesOnce({ Table: description('fixture-table', false, { TableStatus: 'UPDATING' }) })
      .resolvesOnce({
        Table: description('fixture-table', false, { Replicas: [{ RegionName: 'fixture-region-1', ReplicaStatus: 'CREATING' }] }),
      })
      .resolvesOnce({
        Table: description('fixture-table', false, { GlobalSecondaryIndexes: [{ IndexName: 'index-0', IndexStatus: 'CREATING' }] }),
      })
      .resolves({ Table: description('fixture-table', false) });
    dynamodb.on(UpdateTableCommand).rejectsOnce(inUse()).resolves({});
    const { request, waits } = protectionFunction();
    const answer = await request('Create', 'FixtureProtection', properties);
    expect(answer).toMatchObject({ Status: 'SUCCESS' });
    expect(originOf(answer.PhysicalResourceId)).toBe('turned on');
    // AccessDenied, UPDATING, a replica CREATING, an index CREATING, then ResourceInUse: five waits, each longer.
    expect(waits).toHaveLength(5);
    expect(waits).toEqual([...waits].sort((a, b) => a - b));
    expect(dynamodb.commandCalls(UpdateTableCommand).map((call) => call.args[0].input)).toEqual([
      { TableName: 'fixture-table', DeletionProtectionEnabled: true },
      { TableName: 'fixture-table', DeletionProtectionEnabled: true },
    ]);
  });

  it('fails the Create with one clear reason once its budget is spent, well within its timeout, and its rollback leaves the table as it is', async () => {
    dynamodb.on(DescribeTableCommand).resolves({ Table: description('fixture-table', false) });
    dynamodb.on(UpdateTableCommand).rejects(inUse());
    const { request, elapsed } = protectionFunction();
    const answer = await request('Create', 'FixtureProtection', properties);
    expect(answer).toMatchObject({ Status: 'FAILED' });
    expect(answer.Reason).toContain('ResourceInUseException');
    expect(answer.Reason).not.toContain('fixture-table');
    expect(elapsed()).toBeLessThanOrEqual(PROTECTION_BUDGET_SECONDS * 1000);
    expect(elapsed()).toBeGreaterThan((PROTECTION_BUDGET_SECONDS - 60) * 1000);

    dynamodb.resetHistory();
    expect(await request('Delete', 'FixtureProtection', properties, answer.PhysicalResourceId)).toMatchObject({ Status: 'SUCCESS' });
    expect(dynamodb.commandCalls(UpdateTableCommand)).toEqual([]);
  });

  it('fails at once on what time does not mend (no such table)', async () => {
    dynamodb
      .on(DescribeTableCommand)
      .rejects(Object.assign(new Error('Requested resource not found'), { name: 'ResourceNotFoundException' }));
    const { request, waits } = protectionFunction();
    expect(await request('Create', 'FixtureProtection', properties)).toMatchObject({
      Status: 'FAILED',
      Reason: 'Requested resource not found',
    });
    expect(waits).toEqual([]);
  });

  it('answers a Delete SUCCESS whatever DynamoDB answers, so the rollback goes on', async () => {
    dynamodb.on(DescribeTableCommand).resolves({ Table: description('fixture-table', true) });
    dynamodb.on(UpdateTableCommand).rejects(Object.assign(new Error('Validation failed'), { name: 'ValidationException' }));
    const { request } = protectionFunction();
    expect(await request('Delete', 'FixtureProtection', properties, `fixture-table in ${TEST_REGION}: turned on`)).toMatchObject({
      Status: 'SUCCESS',
    });
    expect(dynamodb.commandCalls(UpdateTableCommand)).toHaveLength(1);
  });

  it('leaves the protection as it is on a Delete whose id it did not make', async () => {
    const { request } = protectionFunction();
    expect(await request('Delete', 'FixtureProtection', properties, 'fixture-table in eu-west-1')).toMatchObject({ Status: 'SUCCESS' });
    expect(dynamodb.calls()).toEqual([]);
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
      serviceName: 'fixture-service',
      logRetention: RetentionDays.ONE_DAY,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const synthesized = { stack, template: Template.fromStack(stack) };
    const [protection] = protectionsOf(synthesized);
    if (!protection) throw new Error('no protection');
    return protection;
  };

  describe('against DynamoDB Local', () => {
    const localFunction = async () => {
      const { endpoint, client, pets: tableName } = await createTestTables(['pets']);
      const { request } = protectionFunction({
        clientFor: (region) => new DynamoDBClient({ region, endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
      });
      const { logicalId, properties } = protectionOf(undefined, tableName);
      const protectedNow = async () =>
        (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table?.DeletionProtectionEnabled ?? false;
      const setProtection = (enabled: boolean) =>
        client.send(new UpdateTableCommand({ TableName: tableName, DeletionProtectionEnabled: enabled }));
      return { client, tableName, request, logicalId, properties, protectedNow, setProtection };
    };

    it('protects the table on create, keeps it so on an update, and on delete lets the rollback delete the table', async () => {
      const { client, tableName, request, logicalId, properties, protectedNow } = await localFunction();
      expect(await protectedNow()).toBe(false);
      const created = await request('Create', logicalId, properties);
      expect(created).toMatchObject({ Status: 'SUCCESS' });
      expect(await protectedNow()).toBe(true);
      await expect(client.send(new DeleteTableCommand({ TableName: tableName }))).rejects.toThrow();
      expect(await request('Update', logicalId, properties, created.PhysicalResourceId)).toMatchObject({ Status: 'SUCCESS' });
      expect(await protectedNow()).toBe(true);

      expect(await request('Delete', logicalId, properties, created.PhysicalResourceId)).toMatchObject({ Status: 'SUCCESS' });
      expect(await protectedNow()).toBe(false);
      await client.send(new DeleteTableCommand({ TableName: tableName }));
    });

    it('leaves a table protected before its create protected when that create is rolled back', async () => {
      const { client, tableName, request, logicalId, properties, protectedNow, setProtection } = await localFunction();
      await setProtection(true);
      const created = await request('Create', logicalId, properties);
      expect(created).toMatchObject({ Status: 'SUCCESS' });
      expect(await request('Delete', logicalId, properties, created.PhysicalResourceId)).toMatchObject({ Status: 'SUCCESS' });
      expect(await protectedNow()).toBe(true);
      await setProtection(false);
      await client.send(new DeleteTableCommand({ TableName: tableName }));
    });
  });

  it("changes with its table's template, so CloudFormation runs it again after the table's update; its table and region stay the same", () => {
    const before = protectionOf().properties;
    expect(protectionOf().properties).toEqual(before);
    const after = protectionOf(StreamViewType.NEW_AND_OLD_IMAGES).properties;
    expect(after[TABLE_TEMPLATE_PROPERTY]).not.toEqual(before[TABLE_TEMPLATE_PROPERTY]);
    const { [TABLE_TEMPLATE_PROPERTY]: _after, ...afterRest } = after;
    const { [TABLE_TEMPLATE_PROPERTY]: _before, ...beforeRest } = before;
    expect(afterRest).toEqual(beforeRest);
  });
});
