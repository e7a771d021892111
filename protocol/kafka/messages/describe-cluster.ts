import type { MessageSchema } from '../schema.js';
import { arrayOf, f } from '../schema.js';

/** DescribeCluster (key 60): the brokers and the controller, as the admin client asks for them. */
export const DescribeCluster: MessageSchema = {
  apiKey: 60,
  name: 'DescribeCluster',
  validVersions: '0-1',
  flexibleVersions: '0+',
  request: [f('includeClusterAuthorizedOperations', 'bool'), f('endpointType', 'int8', '1+', { default: 1 })],
  response: [
    f('throttleTimeMs', 'int32'),
    f('errorCode', 'int16'),
    f('errorMessage', 'string', '0+', { nullable: '0+', default: null }),
    f('endpointType', 'int8', '1+', { default: 1 }),
    f('clusterId', 'string'),
    f('controllerId', 'int32', '0+', { default: -1 }),
    f(
      'brokers',
      arrayOf([
        f('brokerId', 'int32'),
        f('host', 'string'),
        f('port', 'int32'),
        f('rack', 'string', '0+', { nullable: '0+', default: null }),
      ]),
    ),
    f('clusterAuthorizedOperations', 'int32', '0+', { default: -2147483648 }),
  ],
};
