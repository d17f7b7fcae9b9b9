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

/** A REMOVE record of the keys table (AWS's documented shape): the item deleted, its old image only. */
export const removeRecord = (sequenceNumber: string): DynamoDBRecord => {
  const { dynamodb, ...record } = modifyRecord(sequenceNumber, 'name', 'ci');
  const { NewImage: _, ...oldImageOnly } = dynamodb ?? {};
  return { ...record, eventName: 'REMOVE', dynamodb: oldImageOnly };
};

/** The record with its change stamped as written in `region` (`changedInRegion`): in the new image, a REMOVE's in the old. */
export const stampedIn = (record: DynamoDBRecord, region: string): DynamoDBRecord => {
  const image = record.eventName === 'REMOVE' ? 'OldImage' : 'NewImage';
  return { ...record, dynamodb: { ...record.dynamodb, [image]: { ...record.dynamodb?.[image], changedInRegion: { S: region } } } };
};

/**
 * The record as the stream of `region`'s replica hands it. Every replica of a global table streams
 * every write, wherever it was made, with the item's images as replicated: the record's own
 * fields (its id, region and stream) are the replica's.
 */
export const inStreamOf = (record: DynamoDBRecord, region: string): DynamoDBRecord => ({
  ...record,
  eventID: `${record.eventID ?? ''}-${region}`,
  awsRegion: region,
  eventSourceARN: `arn:aws:dynamodb:${region}:123456789012:table/fixture-keys/stream/2030-01-02T03:04:05.000`,
});
