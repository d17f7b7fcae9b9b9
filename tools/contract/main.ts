/** Entry point of `npm run contract` and `npm run contract:accept`. */
import { reportFailure } from '../cli';
import { contractToolName, runContractCommand } from './cli';

try {
  process.exitCode = await runContractCommand(process.argv.slice(2));
} catch (error) {
  process.exitCode = reportFailure(contractToolName(process.argv.slice(2)), error);
}
