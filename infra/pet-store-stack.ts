/**
 * PetStoreStack: one stage of the pet store, in one region. The tables, the functions, the API and
 * its monitoring are each a construct of their own; this stack wires them together and publishes
 * the outputs that operators and the key tool read, under the same names in every region. A stage
 * in several regions has one such stack in each (infra/stage-stacks.ts): the home region's defines
 * the global tables and runs the once-only jobs (`isHomeRegion`).
 */
import { CfnOutput, RemovalPolicy, Stack, Tags, type StackProps } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Construct } from 'constructs';
import { USAGE_PLANS_VARIABLE } from '../shared/plan-policy';
import { PROJECT_NAME } from '../shared/project';
import { routes, STAGE_NAME, type Route } from '../shared/routes';
import { stackOutputs, stageResourcePrefix } from '../shared/stack';
import { TABLE_KEYS } from '../shared/tables';
import { IdempotencySweep } from './constructs/idempotency-sweep';
import { KeyAuditTrail } from './constructs/key-audit';
import { Monitoring } from './constructs/monitoring';
import { PetStoreApi } from './constructs/pet-store-api';
import { PetStoreFunctions } from './constructs/pet-store-functions';
import { functionNameOf, RELEASE_ID } from './constructs/names';
import { Release } from './constructs/release';
import { SavedQueries } from './constructs/saved-queries';
import { Throttling } from './constructs/throttling';
import { PetStoreTables } from './constructs/tables';
import { TableProtection } from './constructs/table-protection';
import {
  homeRegionOf,
  isHomeRegion,
  isMultiRegion,
  isRegionalCustomDomain,
  servedDomain,
  stageRegionalPlans,
  stageRegionIndex,
  type StageSettings,
} from './stages';
import { HealthProbe } from './constructs/health-probe';
import { RegionalRouting } from './constructs/regional-routing';
import { DomainCreationOrder } from './constructs/domain-order';

/** Every grant a request's function has (the routes'): the tables and indexes requests read and write. */
const requestGrants = (routes as readonly Route[]).flatMap((route) => route.tableAccess ?? []);

export interface PetStoreStackProps extends StackProps {
  readonly stage: string;
  readonly settings: StageSettings;
  /**
   * This deploy's release ignores its alarms (`cdk deploy -c ignoreReleaseAlarms=true`): for a fix
   * deployed while they fire, which CodeDeploy would otherwise stop and roll back. @default false
   */
  readonly ignoreReleaseAlarms?: boolean;
}

export class PetStoreStack extends Stack {
  readonly tables: PetStoreTables;
  readonly functions: PetStoreFunctions;
  readonly api: PetStoreApi;
  readonly keyAudit: KeyAuditTrail;
  readonly monitoring: Monitoring;
  readonly throttling: Throttling;
  readonly savedQueries: SavedQueries;
  /** This region's own name, health check and Route 53 records; only for a stage in several regions. */
  readonly routing?: RegionalRouting;
  /** The scheduled probe and alarm that the region's Route 53 health check follows; only with `routing`. */
  readonly healthProbe?: HealthProbe;
  /** The order, and the pauses, of the stack's API Gateway custom domains; only with a custom domain. */
  readonly domainOrder?: DomainCreationOrder;
  /** The CodeDeploy release of the functions; none when the stage releases all at once. */
  readonly release?: Release;
  /** The idempotency sweep: in the stage's home region only, as one sweep deletes every replica's records. */
  readonly idempotencySweep?: IdempotencySweep;
  /** The tables' deletion protection, turned on last in every deploy: in the home region's stack of a stage that keeps its data. */
  readonly tableProtection?: TableProtection;
  /** The stage this stack is one region of. */
  readonly stage: string;
  /**
   * Whether this is the stage's home region (or its one region): the stack that defines the tables
   * and runs the jobs that must run once for the stage, such as the key expiry and idempotency sweeps.
   */
  readonly isHomeRegion: boolean;

  constructor(scope: Construct, id: string, { stage, settings, ignoreReleaseAlarms = false, ...stackProps }: PetStoreStackProps) {
    super(scope, id, {
      description: `Pet store API, stage ${stage}`,
      terminationProtection: settings.terminationProtection,
      ...stackProps,
    });
    // For cost allocation and for finding a stage's resources in the console.
    Tags.of(this).add('project', PROJECT_NAME);
    Tags.of(this).add('stage', stage);
    const resourceName = stageResourcePrefix(stage);
    // The service every function logs and counts its metrics under: the stage's own, so that the
    // stages sharing an account (and CloudWatch's PetStore namespace) never mix their metrics or alarms.
    const serviceName = resourceName;
    const kept = { logRetention: settings.logRetention, removalPolicy: settings.removalPolicy };
    // The plans as this region meters them: a stage in several regions splits each quota over them.
    const plans = stageRegionalPlans(settings);

    // A stage in several regions: this region serves the stage's domain with its own certificate, and routes to it.
    const regionalDomain = settings.customDomain && isRegionalCustomDomain(settings.customDomain) ? settings.customDomain : undefined;
    // Refuses, first, a region the stage does not run in.
    const regionIndex = stageRegionIndex(stage, settings, this.region);
    this.stage = stage;
    this.isHomeRegion = isHomeRegion(settings, this.region);

    this.tables = new PetStoreTables(this, 'Tables', {
      stage,
      regions: settings.regions ?? [],
      region: this.region,
      home: this.isHomeRegion,
      witnessRegion: settings.witnessRegion,
      namePrefix: resourceName,
      ...kept,
    });
    // A stage that keeps its data: every replica of every table protected once the rest of the deploy has succeeded.
    if (settings.removalPolicy !== RemovalPolicy.DESTROY && this.tables.defined.length > 0) {
      this.tableProtection = new TableProtection(this, 'TableProtection', {
        tables: this.tables.defined,
        regions: this.tables.replicaRegions,
        functionName: functionNameOf(resourceName, 'tableProtection'),
        serviceName,
        ...kept,
      });
    }
    this.functions = new PetStoreFunctions(this, 'Functions', {
      namePrefix: resourceName,
      serviceName,
      tables: this.tables.byName,
      corsAllowedOrigins: settings.corsAllowedOrigins,
      regionIndex,
      reservedConcurrency: settings.reservedConcurrency,
      statusIndexShards: settings.statusIndexShards,
      ...kept,
    });
    // The API invokes each function's `live` alias; monitoring watches each function whole.
    const operationAliases = new Map([...this.functions.operations].map(([name, fn]) => [name, fn.alias]));
    const operations = new Map([...this.functions.operations].map(([name, fn]) => [name, fn.function]));
    this.api = new PetStoreApi(this, 'Api', {
      apiName: resourceName,
      operations: operationAliases,
      authorizer: this.functions.authorizer.alias,
      throttle: settings.throttle,
      plans,
      authorizerCacheTtlSeconds: settings.authorizerCacheTtlSeconds,
      corsAllowedOrigins: settings.corsAllowedOrigins,
      customDomain: settings.customDomain && servedDomain(settings.customDomain, this.region),
      webAclArn: settings.webAclArn,
      tracing: settings.tracing,
      ...kept,
    });
    if (regionalDomain) {
      const stageDomain = this.api.api.domainName;
      if (!stageDomain) throw new Error('The API has no custom domain to route to.');
      this.healthProbe = new HealthProbe(this, 'HealthProbe', {
        namePrefix: resourceName,
        serviceName,
        tables: this.tables.byName,
        ...kept,
      });
      this.routing = new RegionalRouting(this, 'Routing', {
        api: this.api.api,
        stageDomain,
        domain: regionalDomain,
        region: this.region,
        healthAlarm: this.healthProbe.alarm,
      });
    }
    // API Gateway makes an account's custom domains 30 s apart at most: the stack's are made one after another, paused.
    const domains = [this.api.api.domainName, this.routing?.regionalDomain].filter((domain) => domain !== undefined);
    if (domains.length > 0) {
      this.domainOrder = new DomainCreationOrder(this, 'DomainOrder', { domains, namePrefix: resourceName, serviceName, ...kept });
    }
    // The region's plans, from which the authorizer states each key's RateLimit-Policy (its share of a quota).
    this.functions.authorizer.function.addEnvironment(USAGE_PLANS_VARIABLE, JSON.stringify(plans));
    this.keyAudit = new KeyAuditTrail(this, 'KeyAudit', {
      namePrefix: resourceName,
      serviceName,
      apiKeys: this.tables.apiKeys,
      // The sweep and the audit flush the stage's authorizer cache; the API depends on nothing of them.
      apiStage: { restApiId: this.api.api.restApiId, stageName: STAGE_NAME },
      runsSweep: this.isHomeRegion,
      homeRegion: homeRegionOf(settings),
      // A stage in several regions: its usage keys are API keys in each, deleted and counted by the sweep.
      regions: settings.regions,
      ...kept,
    });
    const expirySweep = this.keyAudit.expirySweep;
    if (this.isHomeRegion) {
      this.idempotencySweep = new IdempotencySweep(this, 'IdempotencySweep', {
        namePrefix: resourceName,
        serviceName,
        idempotency: this.tables.idempotency,
        ...kept,
      });
    }
    this.throttling = new Throttling(this, 'Throttling', {
      accessLogs: this.api.accessLogs,
      restApiId: this.api.api.restApiId,
      plans,
      throttle: settings.throttle,
    });
    this.savedQueries = new SavedQueries(this, 'SavedQueries', {
      folder: resourceName,
      logGroups: {
        access: [this.api.accessLogs],
        operations: [...this.functions.operations.values()].map((fn) => fn.logGroup),
        authorizer: [this.functions.authorizer.logGroup],
        audit: [this.keyAudit.writer.logGroup],
      },
    });
    this.monitoring = new Monitoring(this, 'Monitoring', {
      namePrefix: resourceName,
      serviceName,
      apiStage: this.api.api.deploymentStage,
      functions: operations,
      authorizer: this.functions.authorizer.function,
      authorizerLogGroup: this.functions.authorizer.logGroup,
      // Every table, with the indexes a request reads (the routes' grants name them).
      tables: TABLE_KEYS.map((name) => ({
        table: this.tables.byName[name],
        indexNames: [...new Set(requestGrants.flatMap(({ table, index }) => (table === name && index !== undefined ? [index] : [])))],
      })),
      keyAudit: {
        functions: new Map([
          ['keyAudit', this.keyAudit.writer.function],
          ...(expirySweep ? [['keyExpiry', expirySweep.function] as const] : []),
        ]),
        streamReader: this.keyAudit.writer.function,
        failedBatches: this.keyAudit.failedBatches,
        // Counted by the expiry sweep, so watched in its stack alone (the home region's), every region's count there.
        ...(expirySweep ? { usageKeys: { regions: settings.regions } } : {}),
      },
      // The home region of a stage in several: the keys' replication to every other region.
      ...(this.isHomeRegion && isMultiRegion(settings)
        ? {
            keysReplication: {
              table: this.tables.apiKeys,
              receivingRegions: (settings.regions ?? []).filter((region) => region !== this.region),
            },
          }
        : {}),
      idempotencySweep: this.idempotencySweep?.sweep.function,
      throttling: this.throttling,
      alarmEmail: settings.alarmEmail,
    });
    // The operator hears when Route 53 takes the region out of the stage's domain, and when it is back.
    if (this.healthProbe) {
      const notify = new SnsAction(this.monitoring.alarmTopic);
      this.healthProbe.alarm.addAlarmAction(notify);
      this.healthProbe.alarm.addOkAction(notify);
    }
    if (settings.release !== 'AllAtOnce') {
      this.release = new Release(this, RELEASE_ID, {
        strategy: settings.release,
        namePrefix: resourceName,
        serviceName,
        operations: this.functions.operations,
        authorizer: this.functions.authorizer,
        // The name the RestApi was given: the alarms' ApiName dimension must be exactly it.
        apiName: this.api.api.restApiName,
        ignoreAlarms: ignoreReleaseAlarms,
        ...kept,
      });
    }

    new CfnOutput(this, stackOutputs.apiUrl, { value: this.api.url, description: 'Base URL of the API (ends in /v1)' });
    new CfnOutput(this, stackOutputs.restApiId, {
      value: this.api.api.restApiId,
      description: `The REST API's id: \`npm run keys\` flushes its stage ${STAGE_NAME}'s authorizer cache after a change`,
    });
    new CfnOutput(this, stackOutputs.petsTableName, { value: this.tables.pets.tableName });
    new CfnOutput(this, stackOutputs.apiKeysTableName, {
      value: this.tables.apiKeys.tableName,
      description: 'Where `npm run keys -- create --stage <stage>` registers keys',
    });
    new CfnOutput(this, stackOutputs.apiKeyLastUseTableName, {
      value: this.tables.apiKeyLastUse.tableName,
      description: "Where the authorizer records each key's last use, and `npm run keys -- list --stage <stage>` reads it",
    });
    new CfnOutput(this, stackOutputs.dashboardUrl, { value: this.monitoring.dashboardUrl });
    new CfnOutput(this, stackOutputs.usagePlanIds, {
      value: this.toJsonString(Object.fromEntries([...this.api.usagePlans.plans].map(([name, plan]) => [name, plan.usagePlanId]))),
      description: "Each plan's usage plan id, by plan name: where `npm run keys -- set-plan` puts a key",
    });
    new CfnOutput(this, stackOutputs.keyAuditLogGroupName, {
      value: this.keyAudit.writer.logGroup.logGroupName,
      description: 'The audit trail of API-key changes (`npm run keys -- audit --stage <stage>` reads it)',
    });
    if (this.routing) {
      new CfnOutput(this, stackOutputs.regionalApiUrl, {
        value: `https://${this.routing.regionalName}/${STAGE_NAME}`,
        description: "This region's own base URL (ends in /v1): what `npm run smoke -- --region` calls",
      });
    }
    const domain = this.api.api.domainName;
    if (domain && !this.routing) {
      new CfnOutput(this, 'CustomDomainTarget', {
        value: domain.domainNameAliasDomainName,
        description: 'Point a DNS alias (or CNAME) for the custom domain at this name',
      });
    }
  }
}
