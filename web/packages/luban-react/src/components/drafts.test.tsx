import { render, screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it, vi } from 'vitest'
import type { CardItem } from '../card'
import { DraftContext, DraftStore } from '../drafts'
import type { InputRequest, Receipt } from '../types'
import { UserInputCard } from './UserInputCard'

const FUTURE = new Date(Date.now() + 3600_000).toISOString()

function req(over: Partial<InputRequest> = {}): InputRequest {
  return {
    id: 'ask_d',
    toolCallId: 'call_d',
    sessionId: 's_d',
    runId: 'r1',
    tool: 'ask_user',
    title: '选哪些',
    mode: 'multiple',
    allowCustom: true,
    options: [
      { id: 'a', label: 'A' },
      { id: 'b', label: 'B' },
    ],
    createdAt: new Date().toISOString(),
    expiresAt: FUTURE,
    resumable: true,
    ...over,
  }
}

function mount(card: CardItem, store: DraftStore) {
  const ui = (c: CardItem) => (
    <DraftContext.Provider value={store}>
      <UserInputCard card={c} onSubmit={vi.fn()} onCancel={vi.fn()} />
    </DraftContext.Provider>
  )
  const r = render(ui(card))
  return { ...r, rerender: (c: CardItem) => r.rerender(ui(c)) }
}

describe('card drafts', () => {
  it('come back after a remount (a reload) and go once the request resolves', async () => {
    const store = new DraftStore({ storage: localStorage })
    const card: CardItem = { kind: 'input', key: 'k', phase: 'editing', request: req() }
    const user = userEvent.setup()
    const first = mount(card, store)
    await user.click(screen.getByTestId('option-b'))
    await user.type(screen.getByTestId('custom-input'), '备注')
    expect(store.load('s_d', 'ask_d')).toEqual({ selections: ['b'], custom: '备注' })
    first.unmount()

    const again = mount(card, store)
    expect(screen.getByTestId('option-b')).toBeChecked()
    expect(screen.getByTestId('option-a')).not.toBeChecked()
    expect(screen.getByTestId('custom-input')).toHaveValue('备注')
    // Unchecking everything and emptying the box leaves no draft.
    await user.click(screen.getByTestId('option-b'))
    await user.clear(screen.getByTestId('custom-input'))
    expect(store.load('s_d', 'ask_d')).toBeUndefined()
    await user.click(screen.getByTestId('option-a'))
    expect(store.load('s_d', 'ask_d')).toEqual({ selections: ['a'], custom: '' })

    const rec: Receipt = { requestId: 'ask_d', toolCallId: 'call_d', status: 'answered', selections: ['a'], customInput: '', resolvedAt: new Date().toISOString() }
    again.rerender({ ...card, phase: 'resolved', receipt: rec })
    expect(store.load('s_d', 'ask_d')).toBeUndefined()
  })

  it('a draft that no longer fits the request (unknown option, wrong shape) is not applied', () => {
    const store = new DraftStore({ storage: localStorage })
    store.save('s_d', 'ask_d', { selections: ['gone', 'a'], custom: 7 })
    mount({ kind: 'input', key: 'k', phase: 'editing', request: req() }, store)
    expect(screen.getByTestId('option-a')).toBeChecked()
    expect(screen.getByTestId('custom-input')).toHaveValue('')
  })

  it('a draft is per request: another request of the session starts empty', async () => {
    const store = new DraftStore({ storage: localStorage })
    store.save('s_d', 'ask_d', { selections: ['a'], custom: '' })
    mount({ kind: 'input', key: 'k', phase: 'editing', request: req({ id: 'ask_other' }) }, store)
    expect(screen.getByTestId('option-a')).not.toBeChecked()
  })

  it('a card that cannot be answered drops its draft', () => {
    const store = new DraftStore({ storage: localStorage })
    store.save('s_d', 'ask_d', { selections: ['a'], custom: '' })
    mount({ kind: 'input', key: 'k', phase: 'not_resumable', request: req({ resumable: false }) }, store)
    expect(store.load('s_d', 'ask_d')).toBeUndefined()
  })

  it('the AskUser batch, the form elicitation and the approval keep theirs', async () => {
    const store = new DraftStore({ storage: localStorage })
    const user = userEvent.setup()
    const batch = req({
      id: 'b1',
      tool: 'AskUser',
      mode: 'questions',
      questions: [
        { question: 'Q1', header: 'h1', multi_select: false, options: [{ label: 'x', description: '' }, { label: 'y', description: '' }] },
        { question: 'Q2', header: 'h2', multi_select: true, options: [{ label: 'p', description: '' }, { label: 'q', description: '' }] },
      ],
    })
    let r = mount({ kind: 'input', key: 'b', phase: 'editing', request: batch }, store)
    await user.click(screen.getByTestId('q0-option-1'))
    await user.type(screen.getByTestId('q1-other-input'), 'z')
    r.unmount()
    r = mount({ kind: 'input', key: 'b', phase: 'editing', request: batch }, store)
    expect(screen.getByTestId('q0-option-1')).toBeChecked()
    expect(screen.getByTestId('q1-other')).toBeChecked()
    expect(screen.getByTestId('q1-other-input')).toHaveValue('z')
    r.unmount()

    const form = req({
      id: 'f1',
      tool: 'elicitation',
      mode: 'form',
      fields: [
        { name: 'name', type: 'string', required: true },
        { name: 'color', type: 'enum', required: false, options: [{ value: 'red', label: 'Red' }, { value: 'blue', label: 'Blue' }] },
        { name: 'ok', type: 'boolean', required: false },
      ],
    })
    r = mount({ kind: 'input', key: 'f', phase: 'editing', request: form }, store)
    await user.type(screen.getByTestId('field-name'), 'Ada')
    await user.click(screen.getByTestId('field-color-blue'))
    await user.click(screen.getByTestId('field-ok'))
    r.unmount()
    r = mount({ kind: 'input', key: 'f', phase: 'editing', request: form }, store)
    expect(screen.getByTestId('field-name')).toHaveValue('Ada')
    expect(screen.getByTestId('field-color-blue')).toBeChecked()
    expect(screen.getByTestId('field-ok')).toBeChecked()
    r.unmount()

    const approval = req({ id: 'p1', tool: 'approval', mode: 'approval', toolName: 'write_file', arguments: { path: 'a.txt' } })
    r = mount({ kind: 'input', key: 'p', phase: 'editing', request: approval }, store)
    await user.click(screen.getByTestId('approval-remember'))
    await user.click(screen.getByTestId('approval-reject'))
    await user.type(screen.getByTestId('approval-reason'), '不要写')
    r.unmount()
    mount({ kind: 'input', key: 'p', phase: 'editing', request: approval }, store)
    expect(screen.getByTestId('approval-reason')).toHaveValue('不要写')
    await user.click(screen.getByTestId('approval-close-reject'))
    expect(screen.getByTestId('approval-remember')).toBeChecked()
  })

  it('a card typed into that resolves elsewhere says so and keeps the unsent text, collapsed', async () => {
    const store = new DraftStore({ storage: localStorage })
    const card: CardItem = { kind: 'input', key: 'k', phase: 'editing', request: req({ id: 'ask_e' }) }
    const user = userEvent.setup()
    const r = mount(card, store)
    await user.click(screen.getByTestId('option-a'))
    await user.type(screen.getByTestId('custom-input'), 'deploy/b')
    const receipt: Receipt = { requestId: 'ask_e', toolCallId: 'call_d', status: 'answered', selections: ['b'], customInput: 'deploy/a', resolvedAt: new Date().toISOString() }
    r.rerender({ ...card, phase: 'resolved', receipt })
    const note = screen.getByTestId('resolved-elsewhere')
    expect(note).toHaveTextContent('已在另一个窗口回答')
    expect(screen.getByTestId('unsent-draft')).not.toHaveAttribute('open')
    expect(screen.getByTestId('unsent-draft')).toHaveTextContent('你未发送的草稿deploy/b')
    expect(screen.getByTestId('receipt-custom')).toHaveTextContent('deploy/a')
    expect(store.load('s_d', 'ask_e')).toBeUndefined()
  })

  it('no note for an answer sent from this card, nor for a card without a draft', async () => {
    const store = new DraftStore({ storage: localStorage })
    const card: CardItem = { kind: 'input', key: 'k', phase: 'editing', request: req({ id: 'ask_f' }) }
    const user = userEvent.setup()
    const r = mount(card, store)
    await user.type(screen.getByTestId('custom-input'), 'mine')
    const receipt: Receipt = { requestId: 'ask_f', toolCallId: 'call_d', status: 'answered', selections: [], customInput: 'mine', resolvedAt: new Date().toISOString() }
    r.rerender({ ...card, phase: 'submitting' })
    r.rerender({ ...card, phase: 'resolved', receipt })
    expect(screen.queryByTestId('resolved-elsewhere')).toBeNull()
    r.unmount()
    const other = mount({ ...card, request: req({ id: 'ask_g' }) }, store)
    other.rerender({ ...card, request: req({ id: 'ask_g' }), phase: 'resolved', receipt: { ...receipt, requestId: 'ask_g' } })
    expect(screen.queryByTestId('resolved-elsewhere')).toBeNull()
  })

  it('choices only: the note says the draft was discarded', async () => {
    const store = new DraftStore({ storage: localStorage })
    const card: CardItem = { kind: 'input', key: 'k', phase: 'editing', request: req({ id: 'ask_h' }) }
    const user = userEvent.setup()
    const r = mount(card, store)
    await user.click(screen.getByTestId('option-a'))
    r.rerender({ ...card, phase: 'resolved', receipt: { requestId: 'ask_h', toolCallId: 'call_d', status: 'cancelled', selections: [], customInput: '', resolvedAt: new Date().toISOString() } })
    expect(screen.getByTestId('resolved-elsewhere')).toHaveTextContent('已在另一个窗口取消；你在这里未发送的草稿已丢弃')
    expect(screen.queryByTestId('unsent-draft')).toBeNull()
  })
})
