/**
 * Empties the record of the functions' AWS calls that the IAM check reads after the run. Both
 * projects that record calls name this setup; the run's first call of it starts the record, a
 * second (the other project's, before any test has run) finds it started.
 */
import type { TestProject } from 'vitest/node';
import { startRecordingRun } from './aws-calls';

export default function setup(project: TestProject) {
  // A run narrowed to some projects, files or test names records only their calls.
  const { filenamePattern = [] } = project.vitest as { filenamePattern?: readonly string[] };
  const { project: projects, testNamePattern } = project.vitest.config;
  startRecordingRun(projects.length === 0 && filenamePattern.length === 0 && testNamePattern === undefined);
}
