/** A plans file (`PLANS_FILE`) in a folder of its own, for a test that starts a tool with it. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Plans } from '../../shared/plans';

export interface PlansFile {
  readonly path: string;
  /** Removes the file and its folder. */
  remove(): void;
}

export const writePlansFile = (plans: Plans): PlansFile => {
  const folder = mkdtempSync(join(tmpdir(), 'plans-'));
  const path = join(folder, 'plans.json');
  writeFileSync(path, JSON.stringify({ plans }));
  return { path, remove: () => rmSync(folder, { recursive: true, force: true }) };
};
