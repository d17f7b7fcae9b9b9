/**
 * The IAM check of every role of some stacks, against AWS's own authorization data: every AWS call
 * the functions made during this run's integration and end-to-end tests (recorded by
 * test/support/aws-calls.ts), and every call AWS makes with a function's role, simulated against
 * that function's role in the stack's template. A call the role would refuse fails, and so does a
 * grant that no call uses, unless `acknowledgedUnusedGrants` says why it stays. Its test files
 * (iam-simulation.test.ts, iam-simulation-regions.test.ts) run after the rest of the suite
 * (vitest.config.ts), whose calls they judge: two files, so that two workers share the work.
 */ import { Stack } from 'aws-cdk-lib';
import type { CfnResource } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { tableAccess } from '../../infra/constructs/pet-store-functions';
import { PROJECT_NAME } from '../../shared/project';
import { deployedTableName } from '../../shared/stack';
import { TABLE_KEYS, tableDefinitions } from '../../shared/tables';
import { readRecordedRun, type AwsCall, type RecordedRun } from '../support/aws-calls';
import {
  codeDeployRequests,
  describe as describeRequest,
  policiesOfRole,
  functionsOf,
  matchesPattern,
  platformRequests,
  requestsOf,
  rolePoliciesOf,
  simulate,
  templateResolver,
  type CfnTemplate,
  type IamRequest,
  type PolicyDocument,
  type StageResources,
} from '../support/iam-simulation';
import type { SynthesizedStage } from './synth';

/**
 * Grants no recorded call uses, each with the reason it stays: `<function> <action> <resource pattern>`.
 * Keep this the one place such a grant is allowed.
 */
const acknowledgedUnusedGrants: Readonly<Record<string, string>> = {};

let run: RecordedRun | undefined;
beforeAll(() => {
  run = readRecordedRun();
});

const recorded = (): readonly AwsCall[] => {
  if (!run)
    throw new Error('No AWS calls were recorded: this check judges the calls of the rest of the suite, so run it with them (npm test).');
  return run.calls;
};

/** Every role of each stack against the calls made with it. */
export const describeRoleChecks = (stacks: ReadonlyArray<[string, SynthesizedStage]>): void => {
  describe.each(stacks)('%s: every role against the calls made with it', (_name, { stack, template, settings }) => {
    const stage = stack.stage;
    const json = template.toJSON() as CfnTemplate;
    const resolver = templateResolver(json, stack.region);
    const namePrefix = `${PROJECT_NAME}-${stage}-`;
    const functions = functionsOf(json, namePrefix);
    const logicalId = (construct: { node: { defaultChild?: unknown } }) =>
      Stack.of(stack).getLogicalId(construct.node.defaultChild as CfnResource);
    const deploymentGroupArns = [...(stack.release?.deploymentGroups.values() ?? [])].map((group) => {
      const groupId = logicalId(group);
      const application = resolver.resolve(json.Resources[groupId]?.Properties?.ApplicationName);
      return resolver.arn('codedeploy', `deploymentgroup:${String(application)}/${resolver.ref(groupId)}`);
    });
    const stageResources: StageResources = {
      // Fixed names: the home region's tables and the other regions' replicas alike.
      tableName: (table) => deployedTableName(stage, tableDefinitions[table]),
      functionName: (name) => `${namePrefix}${name}`,
      deploymentGroupArns,
      codeDeployApplicationArn:
        stack.release && resolver.arn('codedeploy', `application:${resolver.ref(logicalId(stack.release.application))}`),
      restApiId: resolver.ref(logicalId(stack.api.api)),
      regions: settings.regions ?? [stack.region],
    };
    const roles = new Map([...functions].map(([name, functionId]) => [name, rolePoliciesOf(json, resolver, functionId)]));
    const roleOf = (name: string) => {
      const role = roles.get(name);
      if (!role) throw new Error(`A call was recorded for ${name}, which is no function of the ${stage} stack`);
      return role;
    };

    /**
     * The scheduled jobs only some stacks run, by the name of their function, and whether this stack
     * runs each: the once-only sweeps run in the home region's stack (or a stage's one region's), the
     * health probe in each region of a stage in several; their calls are judged where they run.
     */
    const jobs: Record<string, boolean> = {
      keyExpiry: stack.keyAudit.expirySweep !== undefined,
      idempotencySweep: stack.idempotencySweep !== undefined,
      healthProbe: stack.healthProbe !== undefined,
    };
    const isJobElsewhere = (name: string) => jobs[name] === false;

    /** Every request made with a function's role: the recorded calls (but of the jobs another region runs), and AWS's own. */
    const requests = (): IamRequest[] => [
      ...recorded()
        .filter((call) => !isJobElsewhere(call.function))
        .flatMap((call) => requestsOf(call, resolver, stageResources)),
      ...[...functions].flatMap(([name, functionId]) => platformRequests(json, resolver, name, functionId)),
    ];

    it('has calls recorded for the functions the tests run', () => {
      const callers = new Set(recorded().map((call) => call.function));
      const sweeps = Object.keys(jobs).filter((name) => jobs[name]);
      for (const name of ['authorizer', ...sweeps, ...(stack.functions.operations.keys() ?? [])]) expect(callers, name).toContain(name);
      // A job another region runs is no function here.
      for (const name of Object.keys(jobs).filter(isJobElsewhere)) expect(functions.has(name), name).toBe(false);
    });

    it('allows every call, the functions’ own and those AWS makes with their roles', async () => {
      const denied: string[] = [];
      for (const request of requests()) {
        const { roleArn, policies } = roleOf(request.function);
        const { decision } = await simulate(request, roleArn, policies);
        if (decision !== 'Allowed') denied.push(`${describeRequest(request)}: ${decision}`);
      }
      expect(denied).toEqual([]);
    });

    it('grants nothing that no call uses, unless acknowledged with its reason', async () => {
      /** `<function> <action> <resource pattern>` of each Allow statement, and whether a call used it. */
      const used = new Set<string>();
      const allRequests = requests();
      for (const request of allRequests) {
        const { roleArn, policies } = roleOf(request.function);
        const { decision, allowedBy } = await simulate(request, roleArn, policies);
        if (decision !== 'Allowed') continue;
        for (const statementId of allowedBy) {
          const statement = statementById(policies, statementId);
          for (const pattern of [statement.Resource].flat()) {
            if (matchesPattern(pattern, request.resource)) used.add(`${request.function} ${request.action.toLowerCase()} ${pattern}`);
          }
        }
      }
      const unused = [...roles].flatMap(([name, { policies }]) =>
        policies.flatMap((policy) =>
          policy.Statement.filter(({ Effect }) => Effect === 'Allow').flatMap((statement) =>
            [statement.Action].flat().flatMap((action) =>
              [statement.Resource]
                .flat()
                .map((pattern) => `${name} ${action} ${pattern}`)
                .filter((grant) => !used.has(`${name} ${action.toLowerCase()} ${grant.split(' ')[2]}`)),
            ),
          ),
        ),
      );
      const unacknowledged = unused.filter((grant) => acknowledgedUnusedGrants[grant] === undefined);
      if (unacknowledged.length > 0 && !run?.wholeSuite) {
        throw new Error(
          `Unused grants are judged on the whole suite's calls, and this run was narrowed: run npm test.\n${unacknowledged.join('\n')}`,
        );
      }
      expect(unacknowledged).toEqual([]);
      // An acknowledgement outlives nothing: a grant a call uses now needs none.
      const usedYet = Object.keys(acknowledgedUnusedGrants).filter((grant) => {
        const [name = '', action = '', pattern = ''] = grant.split(' ');
        return used.has(`${name} ${action.toLowerCase()} ${pattern}`);
      });
      expect(usedYet).toEqual([]);
    });

    it("lets CodeDeploy move each released alias, read the group's alarms and run the hook, and move no other stage's alias", async () => {
      const releases = codeDeployRequests(json, resolver);
      expect(releases).toHaveLength(stack.release?.deploymentGroups.size ?? 0);
      const denied: string[] = [];
      for (const { roleId, requests: made } of releases) {
        const { roleArn, policies } = policiesOfRole(json, resolver, roleId, 'a deployment group');
        for (const request of made) {
          const { decision } = await simulate(request, roleArn, policies);
          if (decision !== 'Allowed') denied.push(`${describeRequest(request)}: ${decision}`);
          if (request.action === 'lambda:UpdateAlias') {
            const otherStage = request.resource.replace(`-${stage}-`, `-${stage === 'staging' ? 'prod' : 'staging'}-`);
            expect((await simulate({ ...request, resource: otherStage }, roleArn, policies)).decision, otherStage).not.toBe('Allowed');
          }
        }
      }
      expect(denied).toEqual([]);
    });

    describe('refuses what must be refused', () => {
      const keysTable = resolver.arn('dynamodb', `table/${stageResources.tableName('apiKeys')}`);
      const petsTable = resolver.arn('dynamodb', `table/${stageResources.tableName('pets')}`);
      const refused = async (request: Omit<IamRequest, 'by'>) => {
        const { roleArn, policies } = roleOf(request.function);
        const { decision } = await simulate({ ...request, by: 'code' }, roleArn, policies);
        expect(decision, describeRequest({ ...request, by: 'code' })).not.toBe('Allowed');
      };

      it("the authorizer writes nothing of a key's item, and nothing of its last use but lastUsedAt", async () => {
        const lastUseTable = resolver.arn('dynamodb', `table/${stageResources.tableName('apiKeyLastUse')}`);
        const lastUse = { function: 'authorizer', action: 'dynamodb:UpdateItem', resource: lastUseTable };
        const { roleArn, policies } = roleOf('authorizer');
        const granted = { 'dynamodb:Attributes': ['keyHash', 'lastUsedAt'], 'dynamodb:ReturnValues': 'NONE' };
        expect((await simulate({ ...lastUse, context: granted, by: 'code' }, roleArn, policies)).decision).toBe('Allowed');
        // The key's item: no write of any kind, its lastUsedAt included.
        for (const action of ['dynamodb:UpdateItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem']) {
          await refused({ function: 'authorizer', action, resource: keysTable, context: granted });
          await refused({
            function: 'authorizer',
            action,
            resource: keysTable,
            context: { 'dynamodb:Attributes': ['keyHash', 'revokedAt'] },
          });
        }
        for (const attribute of ['revokedAt', 'scopes', 'plan', 'name']) {
          await refused({ ...lastUse, context: { 'dynamodb:Attributes': ['keyHash', 'lastUsedAt', attribute] } });
        }
        // Naming no attribute at all (ForAllValues alone would allow it), or asking for the item back.
        await refused({ ...lastUse, context: {} });
        await refused({ ...lastUse, context: { ...granted, 'dynamodb:ReturnValues': 'ALL_OLD' } });
        for (const action of ['dynamodb:PutItem', 'dynamodb:DeleteItem'])
          await refused({ function: 'authorizer', action, resource: lastUseTable, context: granted });
      });

      it("the expiry sweep's role is refused an update naming a key's revokedAt or expiresAt, or any other attribute its code does not name", async () => {
        // Only the home region's stack (or a stage's one region's) runs the sweep.
        if (!stack.keyAudit.expirySweep) return expect(functions.has('keyExpiry')).toBe(false);
        const sweep = tableAccess.keyExpiry.find((grant) => grant.actions.includes('dynamodb:UpdateItem'));
        const granted = sweep?.attributes ?? [];
        const update = { function: 'keyExpiry', action: 'dynamodb:UpdateItem', resource: keysTable };
        const allowed = async (context: IamRequest['context']) => {
          const { roleArn, policies } = roleOf('keyExpiry');
          return (await simulate({ ...update, context, by: 'code' }, roleArn, policies)).decision;
        };
        expect(await allowed({ 'dynamodb:Attributes': granted })).toBe('Allowed');
        for (const attribute of [
          // Its expiry and revocation: the sweep could otherwise un-revoke a key, or extend it.
          'revokedAt',
          'expiresAt',
          'scopes',
          'plan',
          'name',
          'keyId',
          // What meters the key: its usage key's id (no condition of the sweep reads it), its value
          // and their binding.
          'usageKeyId',
          'usageKey',
          'usageKeyBinding',
          'lastUsedAt',
          'replacedBy',
          'createdAt',
        ]) {
          await refused({ ...update, context: { 'dynamodb:Attributes': ['keyHash', attribute] } });
          await refused({ ...update, context: { 'dynamodb:Attributes': [...granted, attribute] } });
        }
        // Naming no attribute at all, or asking for the item back (ALL_OLD, ALL_NEW: the attributes not named).
        await refused({ ...update, context: {} });
        for (const returnValues of ['ALL_OLD', 'ALL_NEW', 'UPDATED_OLD', 'UPDATED_NEW'])
          await refused({ ...update, context: { 'dynamodb:Attributes': granted, 'dynamodb:ReturnValues': returnValues } });
        for (const action of ['dynamodb:PutItem', 'dynamodb:DeleteItem'])
          await refused({ function: 'keyExpiry', action, resource: keysTable, context: { 'dynamodb:Attributes': granted } });
      });

      it('the idempotency sweep deletes a record by its key and expiry, and can neither put nor change one, nor touch a pet', async () => {
        const recordsTable = resolver.arn('dynamodb', `table/${stageResources.tableName('idempotency')}`);
        const deleteContext = { 'dynamodb:Attributes': ['expiresAt', 'id'], 'dynamodb:ReturnValues': 'NONE' };
        // No other function deletes a record, in any region's stack.
        for (const name of [...stack.functions.operations.keys(), 'authorizer', 'keyAudit', ...(jobs.keyExpiry ? ['keyExpiry'] : [])])
          await refused({ function: name, action: 'dynamodb:DeleteItem', resource: recordsTable, context: deleteContext });
        // Only the home region's stack (or a stage's one region's) runs the sweep.
        if (!stack.idempotencySweep) return expect(functions.has('idempotencySweep')).toBe(false);
        const { roleArn, policies } = roleOf('idempotencySweep');
        const decision = async (request: Omit<IamRequest, 'by' | 'function'>) =>
          (await simulate({ ...request, function: 'idempotencySweep', by: 'code' }, roleArn, policies)).decision;
        expect(await decision({ action: 'dynamodb:DeleteItem', resource: recordsTable, context: deleteContext })).toBe('Allowed');
        // It reads each record's key and expiry, and nothing else of it.
        const scanContext = { 'dynamodb:Attributes': ['expiresAt', 'id'] };
        expect(await decision({ action: 'dynamodb:Scan', resource: recordsTable, context: scanContext })).toBe('Allowed');
        await refused({ function: 'idempotencySweep', action: 'dynamodb:Scan', resource: recordsTable, context: {} });
        await refused({
          function: 'idempotencySweep',
          action: 'dynamodb:Scan',
          resource: recordsTable,
          context: { 'dynamodb:Attributes': ['expiresAt', 'id', 'requestHash'] },
        });
        // A delete conditioned on another attribute (its condition names it), naming none, or asking for the record back.
        const other = { function: 'idempotencySweep', action: 'dynamodb:DeleteItem', resource: recordsTable };
        for (const attribute of ['requestHash', 'petId', 'createdAt']) {
          await refused({ ...other, context: { 'dynamodb:Attributes': ['expiresAt', 'id', attribute] } });
        }
        await refused({ ...other, context: {} });
        await refused({ ...other, context: { ...deleteContext, 'dynamodb:ReturnValues': 'ALL_OLD' } });
        for (const action of ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem', 'dynamodb:BatchWriteItem']) {
          await refused({ function: 'idempotencySweep', action, resource: recordsTable, context: deleteContext });
        }
        await refused({ function: 'idempotencySweep', action: 'dynamodb:Query', resource: recordsTable, context: {} });
        for (const action of ['dynamodb:DeleteItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:GetItem'])
          await refused({
            function: 'idempotencySweep',
            action,
            resource: petsTable,
            context: { 'dynamodb:Attributes': ['id', 'expiresAt'] },
          });
      });

      it('the health probe reads a key on each table by its key attribute alone, and writes nothing, nor CloudWatch', async () => {
        // Only a stage in several regions has one: its Route 53 health check follows the probe's alarm.
        if (!stack.healthProbe) return expect(functions.has('healthProbe')).toBe(false);
        const { roleArn, policies } = roleOf('healthProbe');
        const tablesRead = tableAccess.healthProbe.map(({ table, attributes }) => ({
          arn: resolver.arn('dynamodb', `table/${stageResources.tableName(table)}`),
          keyName: attributes?.[0] ?? '',
        }));
        // As GET /v1/health reads them: its route's grants, one per table.
        expect(tablesRead).toHaveLength(new Set(tableAccess.getHealth.map(({ table }) => table)).size);
        for (const { arn, keyName } of tablesRead) {
          const read = { function: 'healthProbe', action: 'dynamodb:GetItem', resource: arn, by: 'code' as const };
          expect((await simulate({ ...read, context: { 'dynamodb:Attributes': [keyName] } }, roleArn, policies)).decision).toBe('Allowed');
          // Any other attribute (what a stored item holds), or none named (the whole item).
          for (const attribute of ['name', 'scopes', 'revokedAt', 'requestHash', 'petId']) {
            await refused({ ...read, context: { 'dynamodb:Attributes': [keyName, attribute] } });
          }
          await refused({ ...read, context: {} });
          for (const action of [
            'dynamodb:PutItem',
            'dynamodb:UpdateItem',
            'dynamodb:DeleteItem',
            'dynamodb:Query',
            'dynamodb:Scan',
            'dynamodb:BatchGetItem',
          ]) {
            await refused({ function: 'healthProbe', action, resource: arn, context: { 'dynamodb:Attributes': [keyName] } });
          }
        }
        const lastUseTable = resolver.arn('dynamodb', `table/${stageResources.tableName('apiKeyLastUse')}`);
        await refused({
          function: 'healthProbe',
          action: 'dynamodb:GetItem',
          resource: lastUseTable,
          context: { 'dynamodb:Attributes': ['keyHash'] },
        });
        // Its metric is a log line (EMF): it may not put metric data, nor touch an alarm, itself.
        for (const action of ['cloudwatch:PutMetricData', 'cloudwatch:SetAlarmState']) {
          await refused({ function: 'healthProbe', action, resource: '*', context: {} });
        }
      });

      it('no function that serves a request deletes, nor writes a table its route does not grant it to write', async () => {
        // From the routes' grants (none may delete): a write no route grants on a table is refused, whichever the operation.
        for (const name of stack.functions.operations.keys()) {
          const grants = tableAccess[name as keyof typeof tableAccess];
          for (const table of TABLE_KEYS) {
            const resource = resolver.arn('dynamodb', `table/${stageResources.tableName(table)}`);
            for (const action of ['dynamodb:DeleteItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem']) {
              const granted = grants.some((grant) => grant.table === table && grant.index === undefined && grant.actions.includes(action));
              if (!granted) await refused({ function: name, action, resource, context: {} });
            }
          }
        }
      });

      it("the expiry sweep and the key audit flush their own stage's authorizer cache, in their own region, and delete nothing else of API Gateway", async () => {
        const restApi = `arn:aws:apigateway:${resolver.region}::/restapis/${stageResources.restApiId}`;
        // Only the home region's stack (or a stage's one region's) runs the sweep; every region's, the audit.
        const flushers = [...(stack.keyAudit.expirySweep ? ['keyExpiry'] : []), 'keyAudit'];
        const otherRegion = resolver.region === 'us-east-2' ? 'us-west-2' : 'us-east-2';
        for (const resource of [
          `${restApi}/stages/other/cache/authorizers`,
          `arn:aws:apigateway:${resolver.region}::/restapis/another/stages/v1/cache/authorizers`,
          // The same stage's id in another region is another region's API: each region's flushes its own.
          `arn:aws:apigateway:${otherRegion}::/restapis/${stageResources.restApiId}/stages/v1/cache/authorizers`,
          `${restApi}/stages/v1/cache/data`,
          `${restApi}/stages/v1`,
          restApi,
        ]) {
          for (const name of flushers) await refused({ function: name, action: 'apigateway:DELETE', resource, context: {} });
        }
        for (const name of flushers) {
          const own = {
            function: name,
            action: 'apigateway:DELETE',
            resource: `${restApi}/stages/v1/cache/authorizers`,
            context: {},
            by: 'code' as const,
          };
          const { roleArn, policies } = roleOf(name);
          expect((await simulate(own, roleArn, policies)).decision, describeRequest(own)).toBe('Allowed');
        }
        // The usage keys are the expiry sweep's to delete, never the audit's.
        await refused({
          function: 'keyAudit',
          action: 'apigateway:DELETE',
          resource: `arn:aws:apigateway:${resolver.region}::/apikeys/a1b2c3`,
          context: {},
        });
        for (const name of [...stack.functions.operations.keys(), 'authorizer']) {
          await refused({ function: name, action: 'apigateway:DELETE', resource: `${restApi}/stages/v1/cache/authorizers`, context: {} });
        }
      });

      it('the pre-traffic hook invokes no live alias and no $LATEST, only the versions it checks', async () => {
        expect(functions.has('preTrafficHook')).toBe(true);
        for (const name of [...stack.functions.operations.keys(), 'authorizer']) {
          const functionArn = resolver.arn('lambda', `function:${stageResources.functionName(name)}`);
          for (const qualifier of ['live', '$LATEST']) {
            await refused({
              function: 'preTrafficHook',
              action: 'lambda:InvokeFunction',
              resource: `${functionArn}:${qualifier}`,
              context: {},
            });
          }
        }
        const unchecked = resolver.arn('lambda', `function:${stageResources.functionName('keyExpiry')}:1`);
        await refused({ function: 'preTrafficHook', action: 'lambda:InvokeFunction', resource: unchecked, context: {} });
      });
    });
  });
};

/** The statement a simulation names `<policy>.<index from 1>`. */
const statementById = (policies: readonly PolicyDocument[], id: string) => {
  const [policy = '', index = ''] = id.split('.');
  const statement = policies[Number(policy.replace('policy', ''))]?.Statement[Number(index) - 1];
  if (!statement) throw new Error(`No statement ${id}`);
  return statement;
};
