/**
 * FindCoordinator: this gateway coordinates every group and every transactional id, since the state
 * lives in Sluice and any gateway can serve any request. v4+ answers a batch of keys.
 */
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { FindCoordinator } from '../../protocol/kafka/messages/find-coordinator.js';
import type { ApiHandler } from '../api.js';

export const GROUP_KEY = 0;
export const TRANSACTION_KEY = 1;

interface Request {
  key: string;
  keyType: number;
  coordinatorKeys: string[];
}

export const findCoordinator: ApiHandler = {
  schema: FindCoordinator,
  minVersion: 0,
  maxVersion: 6,
  errorResponse(request, errorCode) {
    const { coordinatorKeys } = request as unknown as Request;
    return {
      errorCode,
      nodeId: -1,
      port: -1,
      coordinators: coordinatorKeys.map((key) => ({ key, nodeId: -1, host: '', port: -1, errorCode })),
    };
  },
  async handle(request, ctx) {
    const { key, keyType, coordinatorKeys } = request as unknown as Request;
    const { nodeId, host, port } = ctx.gateway.broker();
    const known = keyType === GROUP_KEY || keyType === TRANSACTION_KEY;
    const errorCode = known ? ERROR.NONE : ERROR.INVALID_REQUEST;
    const empty = (k: string): boolean => k.length === 0;
    if (ctx.version < 4) {
      const code = errorCode !== ERROR.NONE ? errorCode : empty(key) ? ERROR.INVALID_REQUEST : ERROR.NONE;
      return code === ERROR.NONE
        ? { throttleTimeMs: 0, errorCode: code, errorMessage: null, nodeId, host, port }
        : {
            throttleTimeMs: 0,
            errorCode: code,
            errorMessage: 'unknown key type or empty key',
            nodeId: -1,
            host: '',
            port: -1,
          };
    }
    return {
      throttleTimeMs: 0,
      coordinators: coordinatorKeys.map((k) => {
        const code = errorCode !== ERROR.NONE ? errorCode : empty(k) ? ERROR.INVALID_REQUEST : ERROR.NONE;
        return code === ERROR.NONE
          ? { key: k, nodeId, host, port, errorCode: code, errorMessage: null }
          : {
              key: k,
              nodeId: -1,
              host: '',
              port: -1,
              errorCode: code,
              errorMessage: 'unknown key type or empty key',
            };
      }),
    };
  },
};
