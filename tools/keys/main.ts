/** Entry point of `npm run keys`. */
import { runKeysCommand } from './cli';

try {
  process.exitCode = await runKeysCommand(process.argv.slice(2));
} catch (error) {
  console.error(`npm run keys: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
