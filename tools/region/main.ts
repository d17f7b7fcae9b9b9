/** Entry point of `npm run region`. */
import { reportFailure } from '../cli';
import { runRegionCommand } from './cli';

try {
  process.exitCode = await runRegionCommand(process.argv.slice(2));
} catch (error) {
  process.exitCode = reportFailure('npm run region', error);
}
