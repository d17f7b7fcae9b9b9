/**
 * SavedQueries: the stage's Logs Insights queries (infra/log-queries.ts), saved in the console's
 * folder `pet-store-<stage>` (CloudWatch → Logs Insights → Saved queries), each over the log
 * groups it reads.
 */
import { type ILogGroup, QueryDefinition, QueryString } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { savedQueries, savedQueryName, type QueriedLogGroup, type SavedQuery } from '../log-queries';

export interface SavedQueriesProps {
  /** The folder: `pet-store-<stage>`. */
  readonly folder: string;
  /** The stage's log groups, by what they are. */
  readonly logGroups: Readonly<Record<QueriedLogGroup, readonly ILogGroup[]>>;
}

/** The text Logs Insights runs. */
export const queryText = (query: SavedQuery): string => new QueryString(query.query).toString();

export class SavedQueries extends Construct {
  readonly definitions: ReadonlyMap<string, QueryDefinition>;

  constructor(scope: Construct, id: string, props: SavedQueriesProps) {
    super(scope, id);
    this.definitions = new Map(
      savedQueries.map((query) => [
        query.name,
        new QueryDefinition(this, query.name, {
          queryDefinitionName: savedQueryName(props.folder, query),
          queryString: new QueryString(query.query),
          logGroups: query.logGroups.flatMap((group) => props.logGroups[group]),
        }),
      ]),
    );
  }
}
