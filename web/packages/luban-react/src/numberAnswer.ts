// The page's check of an ask_user number answer (docs/design.md §2): the
// same rules, codes and params as the server's (askuser checkNumber and
// checkBounds), so a refusal here reads exactly like the server's 422. The
// server still checks every answer.
import type { FieldError, InputRequest } from './types'

/** NUMBER is the server's grammar of a number written in full (42, -3.5, .5, 1e3). */
const NUMBER = /^-?([0-9]+(\.[0-9]+)?|\.[0-9]+)([eE][-+]?[0-9]+)?$/

/**
 * numberProblem is what is wrong with the number answer `value` to `req`
 * (mode number), as the server's field error on customInput: required when
 * blank, format {format: number} when not a number written in full,
 * invalid_type {expected: integer} for a fraction when the question asks
 * for a whole number, out_of_range {min} or {max} beyond a bound; null
 * when the server would take it.
 */
export function numberProblem(req: Pick<InputRequest, 'minimum' | 'maximum' | 'integer'>, value: string): FieldError | null {
  const s = value.trim()
  const field = 'customInput'
  if (!s) return { field, code: 'required', message: 'enter a number' }
  const n = Number(s)
  if (!NUMBER.test(s)) return { field, code: 'format', params: { format: 'number' }, message: `"${s}" is not a number written in full (like 42, -3.5 or 1e3)` }
  if (!Number.isFinite(n)) return { field, code: 'out_of_range', message: `"${s}" is out of range` }
  if (req.integer && !Number.isInteger(n)) return { field, code: 'invalid_type', params: { expected: 'integer', got: 'number' }, message: `${s} is not a whole number` }
  if (req.minimum != null && n < req.minimum) return { field, code: 'out_of_range', params: { min: req.minimum }, message: `${s} is less than the minimum ${req.minimum}` }
  if (req.maximum != null && n > req.maximum) return { field, code: 'out_of_range', params: { max: req.maximum }, message: `${s} is more than the maximum ${req.maximum}` }
  return null
}
