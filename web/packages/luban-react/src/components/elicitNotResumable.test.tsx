import { render, screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it, vi } from 'vitest'
import { failCard, type CardItem } from '../card'
import { DraftContext, DraftStore } from '../drafts'
import { cardDicts, LangContext, type Lang } from '../i18n'
import type { InputRequest, Receipt } from '../types'
import { elicitationText } from './elicitation'
import { UserInputCard } from './UserInputCard'

// Issue 24 item 3: an MCP server's in-session question whose luban process
// died cannot be answered (410 not_resumable, or a not_resumable receipt
// on the stream). The card says why, in the page's language, and never
// that someone answered it elsewhere.

function req(over: Partial<InputRequest> = {}): InputRequest {
  return {
    id: 'ask_nr',
    toolCallId: 'call_nr',
    sessionId: 's_nr',
    runId: 'r1',
    tool: 'elicitation',
    mode: 'form',
    title: 'Your name?',
    server: 'everything',
    fields: [{ name: 'name', title: 'Name', type: 'string', required: true }],
    createdAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 3600_000).toISOString(),
    resumable: true,
    ...over,
  } as InputRequest
}

function mount(card: CardItem, lang: Lang, store = new DraftStore({ storage: localStorage })) {
  const ui = (c: CardItem) => (
    <LangContext.Provider value={lang}>
      <DraftContext.Provider value={store}>
        <UserInputCard card={c} onSubmit={vi.fn()} onCancel={vi.fn()} />
      </DraftContext.Provider>
    </LangContext.Provider>
  )
  const r = render(ui(card))
  return { ...r, rerender: (c: CardItem) => r.rerender(ui(c)) }
}

const notResumable = (id: string): Receipt => ({ requestId: id, toolCallId: 'call_nr', status: 'not_resumable', selections: [], customInput: '', resolvedAt: new Date().toISOString() })

describe('an in-session elicitation whose process died', () => {
  for (const lang of ['zh', 'en'] as const) {
    const t = cardDicts[lang]
    const why = elicitationText[lang].notResumableWhy

    it(`in ${lang}: a typed answer refused 410 not_resumable says why`, async () => {
      const r = req({ id: `ask_410_${lang}` })
      const card: CardItem = { kind: 'input', key: 'k', phase: 'editing', request: r }
      const m = mount(card, lang)
      await userEvent.setup().type(screen.getByLabelText(/Name/), 'Ada')
      const failed = failCard({ ...card, phase: 'submitting' }, { code: 'not_resumable', message: 'server text', status: 410, receipt: notResumable(r.id) })
      m.rerender(failed)
      expect(screen.getByTestId('not-resumable')).toHaveTextContent(why)
      expect(screen.queryByTestId('resolved-elsewhere')).toBeNull()
      expect(document.body.textContent).not.toContain(t.answeredElsewhere)
      expect(document.body.textContent).not.toContain('server text')
      m.unmount()
    })

    it(`in ${lang}: a pending view with resumable false says why`, () => {
      const m = mount({ kind: 'input', key: 'k', phase: 'not_resumable', request: req({ id: `ask_p_${lang}`, resumable: false }) }, lang)
      expect(screen.getByTestId('not-resumable')).toHaveTextContent(why)
      m.unmount()
    })

    it(`in ${lang}: a not_resumable receipt on a card with a draft is not "answered elsewhere"`, async () => {
      const r = req({ id: `ask_rc_${lang}` })
      const card: CardItem = { kind: 'input', key: 'k', phase: 'editing', request: r }
      const m = mount(card, lang)
      await userEvent.setup().type(screen.getByLabelText(/Name/), 'Ada')
      m.rerender({ ...card, phase: 'resolved', receipt: notResumable(r.id) })
      const note = screen.getByTestId('resolved-elsewhere')
      expect(note).toHaveTextContent(t.notResumable)
      expect(note).not.toHaveTextContent(t.answeredElsewhere)
      expect(screen.getByTestId('receipt-status')).toHaveTextContent(t.notResumable)
      expect(screen.getByTestId('receipt-why')).toHaveTextContent(why)
      m.unmount()
    })
  }
})
