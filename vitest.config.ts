import { configDefaults, defineConfig } from 'vitest/config';
// With its extension: Vite loads the config natively, without bundling it, in a coming major.
import LongPolesFirst from './test/support/sequencer.ts';

/** The checks of AWS's own rules that judge what the rest of the run recorded: they run after it. */
const AFTER_THE_RUN = ['test/infra/iam-simulation.test.ts', 'test/infra/iam-simulation-regions.test.ts'];
const UNIT = ['test/unit/**/*.test.ts'];
const INFRA = ['test/infra/**/*.test.ts'];

const common = {
  env: {
    // Tests that read the logs turn them on for themselves.
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    // And the metrics (EMF lines on stdout); tests that read them turn them on.
    POWERTOOLS_METRICS_DISABLED: 'true',
    // The repositories, and the local server's functions, write and list the status index over
    // four shards, as staging and prod do: every listing test runs the merge of shards.
    PETS_STATUS_SHARDS: '4',
  },
  // Bounds on a test, and on a hook (starting servers, DynamoDB Local's tables), that a machine
  // shared with busy processes stays within: only a test that fails waits them out.
  testTimeout: 60_000,
  hookTimeout: 180_000,
  // Every answer of the local server is checked against generated/openapi.json, and every AWS
  // call of a function is recorded for the IAM check.
  setupFiles: ['test/support/contract-setup.ts', 'test/support/aws-calls-setup.ts'],
  sequence: { groupOrder: 0 },
};

/** Tests that reach DynamoDB Local (each file makes its own tables in it). */
const onTheDatabase = {
  // One DynamoDB Local for the project's run.
  globalSetup: ['test/support/recording-setup.ts', 'test/support/global-setup.ts'],
  env: {
    ...common.env,
    // The functions' DynamoDB timeout, through the product's own setting (shared/config.ts):
    // on a busy machine DynamoDB Local answers later than the deployed 1 s, and the servers and
    // handlers under test would answer 503. A call's two attempts (8 s) still end within a
    // function's 10 s, so a database that hangs is still the functions' own 503. Tests of the
    // timeout itself read it (test/support/database.ts).
    DYNAMODB_TIMEOUT_MS: '4000',
  },
};

export default defineConfig({
  test: {
    // Most of a run is waiting on DynamoDB Local, child processes and Chromium, not CPU: three
    // workers on two cores finish in about two thirds of the time the default gives.
    maxWorkers: 3,
    // The longest files first, so that no worker starts one of them near the end of the run.
    sequence: { sequencer: LongPolesFirst },
    projects: [
      {
        test: {
          ...common,
          name: 'unit',
          include: UNIT,
          globalSetup: ['test/support/recording-setup.ts'],
          // No database, server or child process to tell files apart: a worker runs its files in one
          // module graph, rather than load the AWS SDK, zod and ajv again for each of them.
          isolate: false,
        },
      },
      {
        test: {
          ...common,
          ...onTheDatabase,
          name: 'behaviour',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...UNIT, ...INFRA, ...AFTER_THE_RUN],
        },
      },
      {
        test: {
          ...common,
          ...onTheDatabase,
          name: 'infra',
          include: INFRA,
          exclude: [...configDefaults.exclude, ...AFTER_THE_RUN],
          // Stacks synthesized from one app code, and none changes the environment: a worker loads
          // the CDK once for all its files, rather than once each (a third of their time).
          isolate: false,
        },
      },
      {
        test: { ...common, setupFiles: [], name: 'aws-rules', include: AFTER_THE_RUN, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
