import { render, screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it, vi } from 'vitest'
import type { CardItem } from '../card'
import { LangContext } from '../i18n'
import type { InputRequest } from '../types'
import { UserInputCard } from './UserInputCard'

function req(over: Partial<InputRequest> = {}): InputRequest {
  return {
    id: 'ask_k',
    toolCallId: 'call_k',
    sessionId: 's_k',
    runId: 'r1',
    tool: 'ask_user',
    title: '选',
    mode: 'single',
    options: [
      { id: 'a', label: 'A' },
      { id: 'b', label: 'B', recommended: true },
      { id: 'c', label: 'C' },
    ],
    createdAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 3600_000).toISOString(),
    resumable: true,
    ...over,
  }
}

function setup(over: Partial<InputRequest> = {}, lang: 'zh' | 'en' = 'zh') {
  const onSubmit = vi.fn()
  const card: CardItem = { kind: 'input', key: 'k', phase: 'editing', request: req(over) }
  render(
    <LangContext.Provider value={lang}>
      <UserInputCard card={card} onSubmit={onSubmit} onCancel={vi.fn()} />
    </LangContext.Provider>,
  )
  return { onSubmit, user: userEvent.setup(), card: screen.getByTestId('input-card') }
}

describe('card keyboard', () => {
  it('single: a number key chooses, Enter submits', async () => {
    const { onSubmit, user } = setup()
    screen.getByTestId('option-a').focus()
    await user.keyboard('3')
    expect(screen.getByTestId('option-c')).toBeChecked()
    expect(screen.getByTestId('option-c')).toHaveFocus()
    await user.keyboard('{Enter}')
    expect(onSubmit).toHaveBeenCalledWith({ selections: ['c'], customInput: '', cancelled: false })
  })

  it('R accepts the recommended option; the button says which', async () => {
    const { onSubmit, user } = setup()
    expect(screen.getByTestId('accept-recommended')).toHaveTextContent('采用推荐: B')
    expect(screen.getByTestId('accept-recommended')).toHaveAttribute('aria-keyshortcuts', 'R')
    screen.getByTestId('option-a').focus()
    await user.keyboard('r')
    expect(onSubmit).toHaveBeenCalledWith({ selections: ['b'], customInput: '', cancelled: false })
  })

  it('multiple: numbers toggle; digits typed in the note stay text; Esc leaves it; Ctrl+Enter submits', async () => {
    const { onSubmit, user, card } = setup({ mode: 'multiple', allowCustom: true, options: [{ id: 'a', label: 'A' }, { id: 'b', label: 'B' }] })
    expect(screen.queryByTestId('accept-recommended')).toBeNull()
    screen.getByTestId('option-a').focus()
    await user.keyboard('12')
    expect(screen.getByTestId('option-a')).toBeChecked()
    expect(screen.getByTestId('option-b')).toBeChecked()
    await user.keyboard('1')
    expect(screen.getByTestId('option-a')).not.toBeChecked()
    await user.click(screen.getByTestId('custom-input'))
    await user.keyboard('v2{Enter}x')
    expect(screen.getByTestId('custom-input')).toHaveValue('v2\nx')
    expect(onSubmit).not.toHaveBeenCalled()
    await user.keyboard('{Escape}')
    expect(card).toHaveFocus()
    await user.keyboard('1')
    expect(screen.getByTestId('option-a')).toBeChecked()
    screen.getByTestId('custom-input').focus()
    await user.keyboard('{Control>}{Enter}{/Control}')
    expect(onSubmit).toHaveBeenCalledWith({ selections: ['b', 'a'], customInput: 'v2\nx', cancelled: false })
  })

  it('the batch: numbers go to the focused question, else the first unanswered; Other focuses its box', async () => {
    const { onSubmit, user, card } = setup({
      tool: 'AskUser',
      mode: 'questions',
      questions: [
        { question: 'Q1', header: 'h1', multi_select: false, options: [{ label: 'x', description: '' }, { label: 'y', description: '' }] },
        { question: 'Q2', header: 'h2', multi_select: true, options: [{ label: 'p', description: '' }, { label: 'q', description: '' }] },
      ],
    })
    card.focus()
    await user.keyboard('2')
    expect(screen.getByTestId('q0-option-1')).toBeChecked()
    await user.keyboard('{Escape}3')
    expect(screen.getByTestId('q1-other')).toBeChecked()
    expect(screen.getByTestId('q1-other-input')).toHaveFocus()
    await user.keyboard('z{Control>}{Enter}{/Control}')
    expect(onSubmit).toHaveBeenCalledWith(expect.objectContaining({ answers: [{ question: 'Q1', selected: ['y'], other: '' }, { question: 'Q2', selected: [], other: 'z' }] }))
  })

  it('the approval: Ctrl+Enter approves; in the reason box it rejects with the reason', async () => {
    const { onSubmit, user, card } = setup({ tool: 'approval', mode: 'approval', toolName: 'write_file', arguments: { path: 'a' } }, 'en')
    expect(screen.getByTestId('key-hints')).toHaveTextContent('Ctrl+Enter approve')
    screen.getByTestId('approval-reject').focus()
    await user.keyboard('{Enter}')
    expect(screen.getByTestId('approval-reason')).toHaveFocus()
    // Writing a reject: approving is off the card and the hint says Ctrl+Enter rejects.
    expect(screen.queryByTestId('approval-approve')).toBeNull()
    expect(screen.queryByTestId('approval-remember')).toBeNull()
    expect(screen.queryByTestId('approval-edit')).toBeNull()
    expect(screen.getByTestId('key-hints')).toHaveTextContent('Ctrl+Enter confirm reject')
    expect(screen.getByTestId('key-hints')).not.toHaveTextContent('approve')
    await user.keyboard('no{Control>}{Enter}{/Control}')
    expect(onSubmit).toHaveBeenCalledWith({ decision: 'reject', cancelled: false, message: 'no' })
    onSubmit.mockClear()
    card.focus()
    await user.keyboard('{Control>}{Enter}{/Control}')
    expect(onSubmit).toHaveBeenCalledWith({ decision: 'reject', cancelled: false, message: 'no' })
    onSubmit.mockClear()
    // Back: approving is on offer again.
    await user.click(screen.getByTestId('approval-close-reject'))
    expect(screen.getByTestId('approval-remember')).toBeInTheDocument()
    expect(screen.getByTestId('key-hints')).toHaveTextContent('Ctrl+Enter approve')
    card.focus()
    await user.keyboard('{Control>}{Enter}{/Control}')
    expect(onSubmit).toHaveBeenCalledWith({ decision: 'approve', cancelled: false })
  })

  it('the hints are in the page language', () => {
    setup({}, 'zh')
    expect(screen.getByTestId('key-hints')).toHaveTextContent('快捷键:1–9 选择选项Enter 提交Esc 离开输入框R 采用推荐')
  })
})
