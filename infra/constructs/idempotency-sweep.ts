/**
 * IdempotencySweep: the scheduled function that deletes expired idempotency records
 * (functions/idempotency-sweep.ts), in place of DynamoDB's TTL, which a strongly consistent global
 * table does not have. The stack builds it in the stage's home region only: one sweep deletes
 * every region's copy. Its role may query the expiry index and delete a record by its key and
 * expiry, nothing else: it cannot put or change a record.
 */
import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { ApiFunction } from './api-function';
import { grantTableAccess, tableAccess, tableNameVariables } from './pet-store-functions';

export interface IdempotencySweepProps {
  /** Names the function `<namePrefix>-idempotencySweep`. */
  readonly namePrefix: string;
  /** The `service` of the function's log lines and metrics: the stage's own. */
  readonly serviceName: string;
  readonly idempotency: ITableV2;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
}

/**
 * How often the sweep runs. Records expire a day after their create; an expired one already counts
 * as none, so the interval bounds only how long a record is stored (and paid for) past its expiry.
 * Each run reads the table whole (about a day of records): hourly, a record is read 24 times.
 */
export const IDEMPOTENCY_SWEEP_INTERVAL = Duration.hours(1);
/** Long enough for a run's bounded work (functions/idempotency-sweep.ts, MAX_DELETES_PER_RUN). */
const SWEEP_TIMEOUT = Duration.minutes(5);

export class IdempotencySweep extends Construct {
  readonly sweep: ApiFunction;

  constructor(scope: Construct, id: string, props: IdempotencySweepProps) {
    super(scope, id);
    const tables = { idempotency: props.idempotency };
    this.sweep = new ApiFunction(this, 'Sweep', {
      entry: 'functions/idempotency-sweep.ts',
      functionName: `${props.namePrefix}-idempotencySweep`,
      description: 'pet store: deletes expired idempotency records',
      serviceName: props.serviceName,
      environment: tableNameVariables(tableAccess.idempotencySweep, tables),
      timeout: SWEEP_TIMEOUT,
      // Run on a schedule: no START and REPORT line, and no trace of each run (infra/costs.ts).
      withoutPlatformLines: true,
      traced: false,
      // No reserved concurrency: two runs that overlap only race for the same conditional deletes.
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
    });
    grantTableAccess(this.sweep, tableAccess.idempotencySweep, tables);
    new Rule(this, 'Schedule', {
      description: 'Runs the idempotency sweep',
      schedule: Schedule.rate(IDEMPOTENCY_SWEEP_INTERVAL),
      targets: [new LambdaFunction(this.sweep.alias, { retryAttempts: 2 })],
    });
  }
}
