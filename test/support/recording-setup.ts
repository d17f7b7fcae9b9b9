/**
 * Empties the record of the functions' AWS calls that the IAM check reads after the run. Every
 * project that records calls names this setup; the run's first call of it starts the record, the
 * others (before any test has run) find it started.
 */
import type { TestProject } from 'vitest/node';
import { startRecordingRun } from './aws-calls';

export default function setup(project: TestProject) {
  // A run narrowed to some projects, files or test names records only their calls.
  const { filenamePattern = [] } = project.vitest as { filenamePattern?: readonly string[] };
  const { project: projects, testNamePattern } = project.vitest.config;
  startRecordingRun(projects.length === 0 && filenamePattern.length === 0 && testNamePattern === undefined);
}
