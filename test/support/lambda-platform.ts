/**
 * Lambda's own REPORT line, in the JSON log format the functions use (LoggingFormat.JSON): Lambda
 * writes it after each invocation, so no local run has one. Its shape as AWS documents it for the
 * Telemetry API's `platform.report` event; `initDurationMs` only after a cold start.
 */
export const platformReportLine = (): Record<string, unknown> => ({
  time: '2030-01-01T00:00:00.000Z',
  type: 'platform.report',
  record: {
    requestId: '6d68ca91-49c9-448d-89b8-7ca3e6dc66aa',
    metrics: { durationMs: 12.5, billedDurationMs: 13, memorySizeMB: 512, maxMemoryUsedMB: 96, initDurationMs: 210.4 },
    status: 'success',
  },
});
