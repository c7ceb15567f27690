import { describe, expect, it } from 'vitest'
import { failCard, isReceiptOf, type CardItem } from './card'
import type { InputRequest, Receipt } from './types'

const request = { id: 'ask_1', sessionId: 's1', mode: 'single' } as unknown as InputRequest
const rec = (over: Partial<Receipt>): Receipt => ({ requestId: 'ask_1', toolCallId: 'c1', status: 'answered', selections: ['a'], customInput: '', resolvedAt: '2026-03-01T08:00:00Z', ...over })

describe('a 409 already_resolved', () => {
  it('of this card answer is a success; of another one keeps this answer as lost', () => {
    const mine = { selections: ['a'], customInput: '', cancelled: false }
    const card: CardItem = { kind: 'input', key: 'k', phase: 'submitting', request, lastAnswer: mine }
    const same = failCard(card, { status: 409, code: 'already_resolved', message: '', receipt: rec({}) })
    expect(same).toMatchObject({ phase: 'resolved' })
    expect(same.lostAnswer).toBeUndefined()
    const other = failCard({ ...card, lastAnswer: { selections: ['b'], customInput: 'deploy/b', cancelled: false } }, { status: 409, code: 'already_resolved', message: '', receipt: rec({ customInput: 'deploy/a' }) })
    expect(other.lostAnswer).toEqual({ selections: ['b'], customInput: 'deploy/b', cancelled: false })
  })

  it('isReceiptOf judges choices, text, batch answers, approvals and cancels', () => {
    expect(isReceiptOf({ selections: ['b', 'a'], customInput: 'x', cancelled: false }, rec({ selections: ['a', 'b'], customInput: 'x' }))).toBe(true)
    expect(isReceiptOf({ selections: ['a'], customInput: 'y', cancelled: false }, rec({ customInput: 'x' }))).toBe(false)
    const answers = [{ question: 'q', selected: ['L'], other: '' }]
    expect(isReceiptOf({ selections: [], customInput: '', cancelled: false, answers }, rec({ selections: [], answers }))).toBe(true)
    expect(isReceiptOf({ selections: [], customInput: '', cancelled: false, answers }, rec({ selections: [], answers: [{ question: 'q', selected: ['M'], other: '' }] }))).toBe(false)
    const reject = { decision: 'reject', message: 'no', cancelled: false } as never
    expect(isReceiptOf(reject, rec({ decision: 'reject', message: 'no' } as never))).toBe(true)
    expect(isReceiptOf(reject, rec({ decision: 'approve' } as never))).toBe(false)
    expect(isReceiptOf({ selections: [], customInput: '', cancelled: true }, rec({ status: 'cancelled' }))).toBe(true)
    expect(isReceiptOf({ selections: [], customInput: '', cancelled: true }, rec({}))).toBe(false)
    expect(isReceiptOf(undefined, rec({}))).toBe(true)
  })
})
