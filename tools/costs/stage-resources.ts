/**
 * What a stage keeps running whatever its traffic, read from its synthesized templates (every
 * region's stack, as `cdk synth` makes them, without bundling): the metrics its alarms watch, its
 * dashboards and health checks, and the functions it runs on a schedule, with the metrics they
 * publish each time.
 */
import { App, Duration } from 'aws-cdk-lib';
import type { ScheduledFunction, StageResources } from '../../infra/costs';
import { stageStacks } from '../../infra/stage-stacks';
import { isMultiRegion, stageSettings } from '../../infra/stages';

interface Resource {
  readonly Type: string;
  readonly Properties?: Record<string, unknown>;
  readonly Metadata?: Record<string, unknown>;
}

/** The account and region the stacks are synthesized for: any, as no figure depends on them. */
const ACCOUNT = '123456789012';
const REGION = 'us-east-1';

/** Runs a month of a `rate(n unit)` schedule. */
const runsPerMonth = (expression: string): number => {
  const match = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/.exec(expression);
  if (!match) throw new Error(`a schedule this table cannot read: ${expression}`);
  const count = Number(match[1]);
  const unit = match[2]?.replace(/s$/, '') as 'minute' | 'hour' | 'day';
  const every = { minute: Duration.minutes(count), hour: Duration.hours(count), day: Duration.days(count) }[unit];
  return (730 * 3600) / every.toSeconds();
};

/**
 * The custom metrics each scheduled function publishes whatever the traffic (shared/metrics.ts,
 * LevelName), by the construct that runs it: the health probe its region's `DatabaseReadable`
 * each minute; the key expiry sweep `UsageKeys` each hour, by region in a stage of several; the
 * idempotency sweep only what it deleted, so none with no traffic.
 */
const METRICS_OF_SCHEDULED: Readonly<Record<string, (regions: number) => number>> = {
  HealthProbe: () => 1,
  KeyAudit: (regions) => regions,
  IdempotencySweep: () => 0,
};

/** The construct a resource belongs to: the second part of its CDK path (`<stack>/<construct>/…`). */
const constructOf = (resource: Resource | undefined): string => String(resource?.Metadata?.['aws:cdk:path'] ?? '').split('/')[1] ?? '';

const refOf = (value: unknown): string | undefined => (value as { Ref?: string } | undefined)?.Ref;

/** A stage's resources, from every region's template. */
export const stageResources = (stage: string): StageResources => {
  const settings = stageSettings(stage);
  // Path metadata, as the CDK CLI asks for it: each resource names the construct it is of.
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [], 'aws:cdk:enable-path-metadata': true } });
  const stacks = stageStacks(app, { stage, settings, account: ACCOUNT, defaultRegion: REGION });
  const regions = isMultiRegion(settings) ? stacks.length : 1;
  let alarmMetrics = 0;
  let dashboards = 0;
  let healthChecks = 0;
  let functionMemoryMb = 0;
  let requestPathPlatformLines = false;
  const scheduled: ScheduledFunction[] = [];
  const assembly = app.synth();
  for (const stack of stacks) {
    const resources = assembly.getStackArtifact(stack.artifactId).template.Resources as Record<string, Resource>;
    for (const [, resource] of Object.entries(resources)) {
      const properties = resource.Properties ?? {};
      if (resource.Type === 'AWS::CloudWatch::Alarm') {
        const metrics = properties.Metrics as Array<{ MetricStat?: unknown }> | undefined;
        alarmMetrics += metrics ? metrics.filter((metric) => metric.MetricStat !== undefined).length : 1;
      }
      if (resource.Type === 'AWS::CloudWatch::Dashboard') dashboards += 1;
      if (resource.Type === 'AWS::Route53::HealthCheck') healthChecks += 1;
      if (resource.Type === 'AWS::Lambda::Function' && constructOf(resource) === 'Functions') {
        functionMemoryMb = Number(properties.MemorySize);
        requestPathPlatformLines ||= (properties.LoggingConfig as { SystemLogLevel?: string } | undefined)?.SystemLogLevel !== 'WARN';
      }
      if (resource.Type === 'AWS::Events::Rule' && typeof properties.ScheduleExpression === 'string') {
        const targets = properties.Targets as Array<{ Arn?: unknown }>;
        for (const target of targets) {
          const alias = resources[refOf(target.Arn) ?? ''];
          const fn = resources[refOf(alias?.Properties?.FunctionName) ?? ''];
          if (!fn) throw new Error(`${constructOf(resource)}: a schedule whose target is no function of the stack`);
          const name = constructOf(fn);
          const metrics = METRICS_OF_SCHEDULED[name];
          if (!metrics) throw new Error(`${name}: a scheduled function the cost table does not know the metrics of`);
          const logging = (fn.Properties?.LoggingConfig ?? {}) as { SystemLogLevel?: string };
          scheduled.push({
            name,
            runsPerMonth: runsPerMonth(properties.ScheduleExpression),
            memoryMb: Number(fn.Properties?.MemorySize),
            traced: (fn.Properties?.TracingConfig as { Mode?: string } | undefined)?.Mode === 'Active',
            platformLines: logging.SystemLogLevel !== 'WARN',
            metrics: metrics(regions),
          });
        }
      }
    }
  }
  return {
    regions,
    alarmMetrics,
    dashboards,
    healthChecks,
    scheduled,
    functionMemoryMb,
    requestPathPlatformLines,
    tracing: settings.tracing,
  };
};
