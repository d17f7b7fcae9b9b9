/** Records of the keys table's stream, in AWS's documented shape, for the key-audit function's tests. */
import type { DynamoDBRecord } from 'aws-lambda';

/** A MODIFY record of the keys table (AWS's documented shape, NEW_AND_OLD_IMAGES) that sets one attribute. */
export const modifyRecord = (sequenceNumber: string, attribute: string, value: string): DynamoDBRecord => {
  const image = { keyHash: { S: 'f'.repeat(64) }, keyId: { S: 'ffffffffffff' }, name: { S: 'ci' } };
  return {
    eventID: `event-${sequenceNumber}`,
    eventName: 'MODIFY',
    eventSource: 'aws:dynamodb',
    dynamodb: {
      ApproximateCreationDateTime: 1_893_553_445,
      Keys: { keyHash: image.keyHash },
      OldImage: image,
      NewImage: { ...image, [attribute]: { S: value } },
      SequenceNumber: sequenceNumber,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
  };
};
