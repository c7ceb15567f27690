import { render, screen } from '@testing-library/react'
import { describe, expect, it, vi } from 'vitest'
import type { CardItem } from '../card'
import { LangContext, type Lang } from '../i18n'
import { emptySession, reduceSession, type SessionState } from '../session'
import type { InputRequest } from '../types'
import { UserInputCard } from './UserInputCard'

const request = {
  id: 'ask_r',
  toolCallId: 'call_r',
  sessionId: 's_r',
  runId: 'r1',
  tool: 'ask_user',
  title: '部署到哪里',
  mode: 'single',
  options: [
    { id: 'a', label: '甲方案' },
    { id: 'b', label: '乙方案' },
  ],
  createdAt: new Date().toISOString(),
  expiresAt: new Date(Date.now() + 3600_000).toISOString(),
  resumable: true,
} as unknown as InputRequest
const receipt = (selections: string[]) => ({ requestId: 'ask_r', toolCallId: 'call_r', status: 'answered', selections, customInput: '', resolvedAt: new Date().toISOString() })

// race is this tab's card after it sent `mine` while another window's
// answer `theirs` resolved the request: the other window's
// user_input_resolved arrives on this tab's event stream while its own
// answer is still in flight, then its own answer comes back 409
// already_resolved with the same receipt.
function race(mine: string[], theirs: string[]): CardItem {
  let s: SessionState = reduceSession(emptySession, { type: 'event', event: { id: 1, event: 'user_input_required', data: request } })
  s = reduceSession(s, { type: 'cardSubmitting', requestId: 'ask_r', answer: { selections: mine, customInput: '', cancelled: false } })
  s = reduceSession(s, { type: 'event', event: { id: 2, event: 'user_input_resolved', data: receipt(theirs) } })
  s = reduceSession(s, { type: 'cardFailed', requestId: 'ask_r', error: { status: 409, code: 'already_resolved', message: '', receipt: receipt(theirs) as never } })
  return s.items.find((i): i is CardItem => i.kind === 'input')!
}

function show(card: CardItem, lang: Lang) {
  return render(
    <LangContext.Provider value={lang}>
      <UserInputCard card={card} onSubmit={vi.fn()} onCancel={vi.fn()} />
    </LangContext.Provider>,
  )
}

describe('the losing tab of a two-tab race', () => {
  it('says the question was answered in another window and that its answer was not taken (zh and en)', () => {
    const card = race(['b'], ['a'])
    expect(card).toMatchObject({ phase: 'resolved', receipt: { selections: ['a'] }, lostAnswer: { selections: ['b'] } })
    const zh = show(card, 'zh')
    expect(screen.getByTestId('resolved-elsewhere')).toHaveTextContent('已在另一个窗口回答；你的回答没有被采用')
    expect(screen.getByTestId('receipt-selections')).toHaveTextContent('甲方案')
    zh.unmount()
    show(card, 'en')
    expect(screen.getByTestId('resolved-elsewhere')).toHaveTextContent('Answered in another window; your answer was not taken')
  })

  it('the winning tab, whose own answer comes back on its stream, says nothing', () => {
    const card = race(['a'], ['a'])
    expect(card.lostAnswer).toBeUndefined()
    show(card, 'zh')
    expect(screen.queryByTestId('resolved-elsewhere')).toBeNull()
  })
})
