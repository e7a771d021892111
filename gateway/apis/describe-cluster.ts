/** DescribeCluster: one broker, this gateway, which is also the controller. */
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { DescribeCluster } from '../../protocol/kafka/messages/describe-cluster.js';
import type { ApiHandler } from '../api.js';

const BROKER_ENDPOINT = 1;

export const describeCluster: ApiHandler = {
  schema: DescribeCluster,
  minVersion: 0,
  maxVersion: 1,
  async handle(request, ctx) {
    const endpointType = (request as { endpointType?: number }).endpointType ?? BROKER_ENDPOINT;
    if (endpointType !== BROKER_ENDPOINT)
      return {
        errorCode: ERROR.UNSUPPORTED_ENDPOINT_TYPE,
        errorMessage: 'only broker endpoints are served',
        endpointType,
        clusterId: '',
      };
    const { nodeId, host, port, rack } = ctx.gateway.broker();
    return {
      throttleTimeMs: 0,
      errorCode: ERROR.NONE,
      errorMessage: null,
      endpointType,
      clusterId: await ctx.gateway.clusterId(),
      controllerId: nodeId,
      brokers: [{ brokerId: nodeId, host, port, rack }],
    };
  },
};
