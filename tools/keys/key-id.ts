/** The key id an operator gives the key tool (show, roll, revoke, audit), checked once for every command. */
import { API_KEY_PATTERN, hashApiKey, isKeyId, keyIdOf } from '../../shared/api-keys';
import { UsageError } from '../cli';

/**
 * The id `command` was given (absent stays absent). A key given in its place is refused without
 * being printed, naming the key's id instead; anything else that is no id is not echoed either.
 */
export const keyIdArgument = (argument: string | undefined, command = 'audit'): string | undefined => {
  if (argument === undefined || isKeyId(argument)) return argument;
  if (API_KEY_PATTERN.test(argument)) {
    const keyId = keyIdOf(hashApiKey(argument));
    throw new UsageError(
      `${command} takes a key id, not the key itself (not shown here): that key's id is ${keyId} (npm run keys -- ${command} ${keyId}).`,
    );
  }
  throw new UsageError(`${command} takes a key id, 12 hexadecimal digits as npm run keys -- list shows them.`);
};
