/** What to do about an API error, in a line: the command to run next, or the setting to check. */
import type { SluiceError } from '../sdk/errors.js';
import { attemptsOf } from './api.js';

const REJOIN = 'the group moved on without this member: run the consumer again to rejoin';
const UNSIGNED =
  'the API takes SigV4-signed requests from a caller allowed execute-api:Invoke on this route: pass ' +
  '--region (and --profile), and check the credentials and their IAM policy';

const BY_CODE: Record<string, string> = {
  UNKNOWN_TOPIC_OR_PARTITION:
    'list the topics with `sluice topics list`; create one with `sluice topics create <topic>`',
  TOPIC_ALREADY_EXISTS: 'choose another name, or pass --if-not-exists',
  INVALID_TOPIC_EXCEPTION: 'a topic name is 1-249 characters of a-z A-Z 0-9 . _ - (not "." or "..")',
  INVALID_PARTITIONS: 'partitions only grow; `sluice topics describe <topic>` shows the current count',
  INVALID_REPLICATION_FACTOR:
    'the replication factor is at most the number of stores; `sluice cluster` lists them',
  INVALID_CONFIG: 'configs take Kafka names and string values, e.g. --config retention.ms=86400000',
  GROUP_ID_NOT_FOUND: 'list the groups with `sluice groups list`',
  UNKNOWN_STATE_STORE:
    'the message lists the stores the application registered; a new store appears once `sluice streams run <app.ts>` starts with it',
  NON_EMPTY_GROUP:
    'the group still has members: stop its consumers (an idle member expires after the 45 s session timeout) and retry',
  MESSAGE_TOO_LARGE:
    'send smaller records, or raise the limit: `sluice topics alter <topic> --config max.message.bytes=N`',
  RECORD_LIST_TOO_LARGE: 'send smaller requests: lower --batch-bytes or --batch-records',
  STALE_MEMBER_EPOCH: REJOIN,
  FENCED_MEMBER_EPOCH: REJOIN,
  UNKNOWN_MEMBER_ID: REJOIN,
  SASL_AUTHENTICATION_FAILED: UNSIGNED,
  TOPIC_AUTHORIZATION_FAILED: UNSIGNED,
  GROUP_AUTHORIZATION_FAILED: UNSIGNED,
  UNKNOWN_SERVER_ERROR: 'the server failed; its log says why (locally: `SLUICE_VERBOSE=1 npm start`)',
};

/** The hint printed under an error, or undefined when the message says it all. */
export const hintFor = (error: SluiceError, url: string): string | undefined => {
  if (error.refused) {
    return `nothing answers at ${url}: is \`npm start\` running? (or point --url / SLUICE_URL at the API)`;
  }
  const hints: string[] = [];
  if (typeof error.details['didYouMean'] === 'string')
    hints.push(`did you mean ${error.details['didYouMean']}?`);
  if (error.code === 'NETWORK_EXCEPTION') hints.push(`check --url (${url}) and the network`);
  if (error.code === 'NOT_FOUND' || error.code === 'METHOD_NOT_ALLOWED') {
    hints.push(`is ${url} the base URL of a Sluice API (without /v1)?`);
  }
  if (error.code === 'OFFSET_OUT_OF_RANGE') {
    const { logStartOffset, highWatermark } = error.details;
    if (typeof logStartOffset === 'number' && typeof highWatermark === 'number') {
      hints.push(
        `the log holds offsets ${logStartOffset} to ${highWatermark}; try --from earliest or latest`,
      );
    }
  }
  const known = BY_CODE[error.code];
  if (known) hints.push(known);
  if (error.retriable) {
    hints.push(
      `retriable — try again${attemptsOf(error) > 1 ? ` (this command already tried ${attemptsOf(error)} times)` : ''}`,
    );
  }
  return hints.length > 0 ? hints.join('; ') : undefined;
};
