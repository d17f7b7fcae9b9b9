/**
 * Who runs the key tool, as every change it writes records it (`changedBy`): on AWS the ARN of
 * the credentials' identity (STS GetCallerIdentity), locally `local:<the OS user>`.
 */
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { userInfo } from 'node:os';
import type { Actor } from '../../shared/api-keys-repository';
import type { KeysTarget } from './target';

export type CallerLookup = Pick<STSClient, 'send'>;

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Who makes a change on this machine, as the key tool and the local server record it:
 * `local:<the OS user>`. A process without a passwd entry (some containers) falls back on $USER.
 */
export const localActor = (env: Env = process.env): Actor => {
  try {
    return `local:${userInfo().username}`;
  } catch {
    return `local:${env.USER || env.USERNAME || 'unknown'}`;
  }
};

/** STS could not say who the caller is; `reason` is the error's name only (an STS message may quote the access key id). */
export class CallerUnknown extends Error {
  override readonly name = 'CallerUnknown';

  constructor(readonly reason: string) {
    super(`AWS STS could not say who you are (${reason}), so nothing was changed: check your AWS credentials.`);
  }
}

/** The actor of the changes this run makes on `target`; `sts` answers on AWS (built from --region when absent). */
export const actorOf = async (target: Pick<KeysTarget, 'onAws' | 'region'>, env: Env, sts?: CallerLookup): Promise<Actor> => {
  if (!target.onAws) return localActor(env);
  const client = sts ?? new STSClient({ region: target.region });
  const refused = (reason: string) => new CallerUnknown(reason);
  let arn: string | undefined;
  try {
    arn = (await client.send(new GetCallerIdentityCommand({}))).Arn;
  } catch (error) {
    // The reason is the error's name only: an STS message may quote the access key id.
    throw refused(error instanceof Error ? error.name : 'no answer');
  } finally {
    if (sts === undefined && client instanceof STSClient) client.destroy();
  }
  if (!arn) throw refused('no ARN in its answer');
  return arn;
};
