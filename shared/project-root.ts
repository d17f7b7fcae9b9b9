/**
 * The project's root folder: handler entries, the lockfile and generated files are found from
 * here. For the stack, the tools and the tests; no function imports it (a bundle has no root).
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
