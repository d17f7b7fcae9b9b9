/**
 * HealthProbe: what Route 53's health check of a region follows, in place of a public request. A
 * schedule runs the probe (functions/health-probe.ts) each minute; it reads the region's tables as
 * the health route does and publishes `DatabaseReadable`, 1 or 0, by the stage's service: 0 also
 * while operators have drained the region (`npm run region`), whose switch is the key it reads on
 * the idempotency table. The alarm is in ALARM when the minute's lowest value is below 1, or when
 * the minute has none (the probe did not run, or could not publish): a probe that cannot run counts
 * as failing. Its role may read one key on each table, by its key attribute alone, and nothing
 * else (no write: it cannot drain or restore a region); the metric is a log line (the Embedded
 * Metric Format), so it needs no CloudWatch permission.
 */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, SERVICE_DIMENSION } from '../../shared/metrics';
import type { TableNames } from '../../shared/tables';
import { ApiFunction } from './api-function';
import { databaseReadableAlarmNameOf, functionNameOf } from './names';
import { grantTableAccess, tableAccess, tableNameVariables } from './pet-store-functions';

/** How often the probe runs, and the alarm's period: CloudWatch's standard resolution, which Route 53 requires. */
export const HEALTH_PROBE_INTERVAL = Duration.minutes(1);
/** Reads of a key no item has answer in milliseconds; a probe still running past this publishes nothing, and fails. */
const PROBE_TIMEOUT = Duration.seconds(15);

export interface HealthProbeProps {
  /** Names the function `<namePrefix>-healthProbe` and the alarm `<namePrefix>-database-readable`. */
  readonly namePrefix: string;
  /** The `service` of the function's log lines and metric: the stage's own, the alarm's dimension. */
  readonly serviceName: string;
  /** Every table: it is granted, and told the names of, those its grants (the health route's) name. */
  readonly tables: Readonly<Record<keyof TableNames, ITableV2>>;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

export class HealthProbe extends Construct {
  readonly probe: ApiFunction;
  /** In ALARM while the region cannot read its tables, or the probe does not report: what Route 53's check follows. */
  readonly alarm: Alarm;

  constructor(scope: Construct, id: string, props: HealthProbeProps) {
    super(scope, id);
    const grants = tableAccess.healthProbe;
    this.probe = new ApiFunction(this, 'Probe', {
      entry: 'functions/health-probe.ts',
      functionName: functionNameOf(props.namePrefix, 'healthProbe'),
      description: "pet store: reads the region's tables each minute, for its Route 53 health check",
      serviceName: props.serviceName,
      environment: tableNameVariables(grants, props.tables),
      timeout: PROBE_TIMEOUT,
      // Run on a schedule: no START and REPORT line, and no trace of each run (infra/costs.ts).
      withoutPlatformLines: true,
      traced: false,
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    grantTableAccess(this.probe, grants, props.tables);
    new Rule(this, 'Schedule', {
      description: "Runs the region's health probe",
      schedule: Schedule.rate(HEALTH_PROBE_INTERVAL),
      // A probe delivered after its minute is of no use: the next one is on its way.
      targets: [new LambdaFunction(this.probe.alias, { retryAttempts: 2, maxEventAge: HEALTH_PROBE_INTERVAL })],
    });
    this.alarm = new Alarm(this, 'DatabaseReadable', {
      alarmName: databaseReadableAlarmNameOf(props.namePrefix),
      alarmDescription:
        "The region could not read its tables in the last minute, or was drained by its operators (npm run region), or its health probe did not report: Route 53 takes it out of the stage's domain.",
      metric: new Metric({
        namespace: METRICS_NAMESPACE,
        metricName: 'DatabaseReadable',
        dimensionsMap: { [SERVICE_DIMENSION]: props.serviceName },
        statistic: 'Minimum',
        period: HEALTH_PROBE_INTERVAL,
      }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      treatMissingData: TreatMissingData.BREACHING,
    });
  }
}
