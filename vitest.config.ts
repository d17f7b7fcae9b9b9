import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One DynamoDB Local for the whole run; every test file makes its own tables in it.
    globalSetup: ['test/support/global-setup.ts'],
    // Every answer of the local server is checked against generated/openapi.json.
    setupFiles: ['test/support/contract-setup.ts'],
    env: {
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      // Tests that read the logs turn them on for themselves.
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      // And the metrics (EMF lines on stdout); tests that read them turn them on.
      POWERTOOLS_METRICS_DISABLED: 'true',
    },
    // Most of a run is waiting on DynamoDB Local, child processes and Chromium, not CPU: three
    // workers on two cores finish in about two thirds of the time the default gives.
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 90_000,
  },
});
