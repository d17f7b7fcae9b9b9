/**
 * A custom resource's answer to CloudFormation: its response body, PUT to the request's presigned URL
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/crpg-ref-responses.html).
 */

/** CloudFormation's presigned URL takes the body with no content type (the signature covers none). */
export const putResponse = async (url: string, body: string): Promise<void> => {
  const answer = await fetch(url, { method: 'PUT', body, headers: { 'content-type': '' } });
  if (!answer.ok) throw new Error(`CloudFormation's response URL answered ${answer.status}`);
};
