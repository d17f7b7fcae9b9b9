/** Entry point of `npm run keys`. */
import { reportFailure } from '../cli';
import { runKeysCommand } from './cli';

try {
  process.exitCode = await runKeysCommand(process.argv.slice(2));
} catch (error) {
  process.exitCode = reportFailure('npm run keys', error);
}
