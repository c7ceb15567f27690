// The page words the server's errors itself, by their stable code (DESIGN
// §3, api.ErrorCode) and, for a rejected answer, by the field path: the
// server's message is English and only ever shown as a detail.
import type { Dict } from './i18n'

/** CodedError is what errorText needs of an error answer. */
export type CodedError = { status?: number; code: string; message?: string }

/**
 * errorText is the sentence for an error answer in the page language: by
 * its code, else by its status (5xx: the server failed, the input is kept),
 * else the server's message as a last resort.
 */
export function errorText(t: Dict, e: CodedError): string {
  switch (e.code) {
    case 'network':
    case 'network_error':
      return t.errNetwork
    case 'stream_lost':
      return t.streamLost
    case 'run_in_progress':
      return t.runInProgress
    case 'interaction_pending':
      return t.interactionPending
    case 'payload_too_large':
      return t.payloadTooLarge
    case 'session_not_found':
      return t.sessionGone
    case 'interaction_not_found':
      return t.interactionGone
    case 'not_resumable':
      return t.notResumable
    case 'interaction_expired':
      return t.receiptExpired
    case 'request_timeout':
      return t.errTimeout
    case 'invalid_request':
      return t.errInvalidRequest
    case 'forbidden_origin':
    case 'unauthorized':
      return t.errUnauthorized
    case 'internal_error':
      return t.errServer
  }
  if (e.status !== undefined && e.status >= 500) return t.errServer
  return e.message || e.code
}

/** retryable reports whether sending the same thing again may succeed. */
export function retryable(e: CodedError): boolean {
  return e.code === 'network' || e.code === 'network_error' || e.code === 'stream_lost' || e.code === 'request_timeout' || (e.status !== undefined && e.status >= 500)
}
