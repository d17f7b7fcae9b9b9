/**
 * A CloudFormation custom resource that only waits: it answers each request (create, update,
 * delete) after the seconds its resource names. infra/constructs/domain-order.ts puts one before
 * each API Gateway custom domain of a stack, so that no two of the account's CreateDomainName (or
 * DeleteDomainName) calls come closer than API Gateway's fixed quota of one every 30 seconds.
 * The answer is CloudFormation's custom resource response, PUT to the request's presigned URL
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/crpg-ref-responses.html).
 */
import type { CloudFormationCustomResourceEvent, CloudFormationCustomResourceResponse } from 'aws-lambda';
import { setTimeout as sleep } from 'node:timers/promises';
import { MAX_PAUSE_SECONDS, PAUSE_SECONDS_PROPERTY } from '../shared/deploy-pause';
import { logger, safeErrorFields } from '../shared/logger';

export interface DeployPauseDependencies {
  /** Waits this long. @default a timer */
  readonly wait?: (milliseconds: number) => Promise<void>;
  /** Sends the response to CloudFormation. @default an HTTPS PUT of the body to the presigned URL */
  readonly respond?: (url: string, body: string) => Promise<void>;
}

/** CloudFormation's presigned URL takes the body with no content type (the signature covers none). */
const putResponse = async (url: string, body: string): Promise<void> => {
  const answer = await fetch(url, { method: 'PUT', body, headers: { 'content-type': '' } });
  if (!answer.ok) throw new Error(`CloudFormation's response URL answered ${answer.status}`);
};

/** The seconds a request asks for, or undefined when they are not a whole number from 0 to MAX_PAUSE_SECONDS. */
const pauseSecondsOf = (event: CloudFormationCustomResourceEvent): number | undefined => {
  const seconds = Number(event.ResourceProperties[PAUSE_SECONDS_PROPERTY]);
  return Number.isInteger(seconds) && seconds >= 0 && seconds <= MAX_PAUSE_SECONDS ? seconds : undefined;
};

export const createHandler =
  ({ wait = (milliseconds) => sleep(milliseconds).then(() => undefined), respond = putResponse }: DeployPauseDependencies = {}) =>
  async (event: CloudFormationCustomResourceEvent): Promise<void> => {
    // The same id for the resource's whole life: a new one would make CloudFormation delete the old.
    const physicalResourceId = event.RequestType === 'Create' ? event.LogicalResourceId : event.PhysicalResourceId;
    const seconds = pauseSecondsOf(event);
    const answer = (status: 'SUCCESS' | 'FAILED', reason: string): CloudFormationCustomResourceResponse => ({
      Status: status,
      Reason: reason,
      PhysicalResourceId: physicalResourceId,
      StackId: event.StackId,
      RequestId: event.RequestId,
      LogicalResourceId: event.LogicalResourceId,
    });
    let response: CloudFormationCustomResourceResponse;
    if (seconds === undefined) {
      // A delete is never refused: the stack's deletion must not stop on it.
      response =
        event.RequestType === 'Delete'
          ? answer('SUCCESS', 'Deleted without a pause: it named no valid one')
          : answer('FAILED', `${PAUSE_SECONDS_PROPERTY} must be a whole number of seconds from 0 to ${MAX_PAUSE_SECONDS}`);
    } else {
      await wait(seconds * 1000);
      response = answer('SUCCESS', `Waited ${seconds} s`);
    }
    logger.info('deploy pause: answered', {
      requestType: event.RequestType,
      logicalResourceId: event.LogicalResourceId,
      status: response.Status,
      seconds,
    });
    try {
      await respond(event.ResponseURL, JSON.stringify(response));
    } catch (error) {
      // Thrown again: Lambda retries the event, and CloudFormation waits for an answer until then.
      logger.error('deploy pause: could not answer CloudFormation', safeErrorFields(error));
      throw error;
    }
  };

export const handler = createHandler();
