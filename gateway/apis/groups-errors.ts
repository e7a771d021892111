/**
 * Error codes as the classic group APIs speak them. Sluice's coordinator fences stale member epochs
 * with KIP-848's names; a classic member knows the same fence as ILLEGAL_GENERATION (Kafka 4 maps them
 * the same way for classic members of a consumer group).
 */
import { ERROR } from '../../protocol/kafka/error-codes.js';
import { errorCodeOf } from '../api.js';

export function classicErrorCode(error: unknown): number {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'FENCED_MEMBER_EPOCH' || code === 'STALE_MEMBER_EPOCH') return ERROR.ILLEGAL_GENERATION;
  // A malformed group id is Kafka's INVALID_GROUP_ID.
  if (code === 'INVALID_REQUEST' && /group id/.test((error as Error).message)) return ERROR.INVALID_GROUP_ID;
  return errorCodeOf(error);
}

/** Whether a group id is one Sluice accepts (API.md: 1-255 printable characters). */
export const isGroupId = (groupId: string): boolean =>
  groupId.length > 0 && [...groupId].length <= 255 && !/\p{Cc}/u.test(groupId);
