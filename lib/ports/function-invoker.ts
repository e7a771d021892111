/**
 * Invoking a function (AWS Lambda's Invoke API), as the Lambda sink connector needs it: the payload
 * goes out as bytes and the answer comes back as Lambda gives it — the status, the function's error
 * kind when its code failed (`X-Amz-Function-Error`), and the response payload. A failure of the call
 * itself (throttled, unreachable, refused) is an InvokeFailure, never an SDK exception.
 */
export type InvocationType = 'RequestResponse' | 'Event';

export interface InvokeRequest {
  /** A function name, name:qualifier, or ARN. */
  functionName: string;
  invocationType: InvocationType;
  payload: Uint8Array;
}

export interface InvokeResult {
  /** 200 for RequestResponse, 202 for Event. */
  statusCode: number;
  /** Set when the function's code failed (`Unhandled`); the payload then holds its error object. */
  functionError?: string;
  payload: Uint8Array;
}

export interface FunctionInvoker {
  invoke(request: InvokeRequest): Promise<InvokeResult>;
}

/**
 * The call failed before the function ran, or its outcome is unknown. `retriable` says whether trying
 * again may succeed (throttling, a service or network failure) or not (no such function, a payload
 * too large, access denied). The message names the function and the reason in plain words, so it can
 * be shown in a task's status trace without exposing AWS's exception names.
 */
export class InvokeFailure extends Error {
  constructor(
    message: string,
    readonly retriable: boolean,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'InvokeFailure';
  }
}
