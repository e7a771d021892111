/**
 * The connections port: sends a message to one open client connection (an API Gateway WebSocket on
 * AWS, the local gateway's socket under `npm start`, an in-process channel in tests). The core hands
 * it text and learns only whether the connection is still there; it never sees the transport.
 */
export type PostOutcome = 'sent' | 'gone';

export interface ConnectionNotifier {
  /** Sends `message` to the connection; `gone` when it no longer exists (it is then forgotten). */
  post(connectionId: string, message: string): Promise<PostOutcome>;
}
