import { fireEvent, render, screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it, vi } from 'vitest'
import type { CardItem } from '../card'
import { LangContext } from '../i18n'
import type { InputRequest, Receipt } from '../types'
import { UserInputCard } from './UserInputCard'

const EVIL = '<img src=x onerror=alert(1)>'

function askUser(): InputRequest {
  return {
    id: 'ask_9',
    toolCallId: 'call_9',
    sessionId: 's1',
    runId: 'r1',
    tool: 'AskUser',
    title: '用哪种布局？',
    mode: 'questions',
    questions: [
      {
        question: '用哪种布局？',
        header: '布局',
        context: 'diff --git a/x b/x\n+ new line',
        multi_select: false,
        options: [
          { label: '两栏 (Recommended)', description: '左侧导航', preview: '+------+------+\n| nav  | main |\n+------+------+' },
          { label: '单栏', description: '只有内容', preview: EVIL },
        ],
      },
      {
        question: '要哪些检查？',
        header: '检查',
        multi_select: true,
        options: [
          { label: 'lint', description: '静态检查' },
          { label: 'test', description: '单元测试' },
        ],
      },
    ],
    createdAt: new Date().toISOString(),
    expiresAt: new Date(Date.now() + 3600_000).toISOString(),
    resumable: true,
  }
}

function setup(over: Partial<CardItem> = {}) {
  const card: CardItem = { kind: 'input', key: 'k', phase: 'editing', request: askUser(), ...over }
  const onSubmit = vi.fn()
  const user = userEvent.setup()
  const ui = (c: CardItem) => (
    <LangContext.Provider value="zh">
      <UserInputCard card={c} onSubmit={onSubmit} onCancel={vi.fn()} />
    </LangContext.Provider>
  )
  const r = render(ui(card))
  return { card, onSubmit, user, rerender: (c: CardItem) => r.rerender(ui(c)) }
}

describe('AskUser card (AgentScope AskUser)', () => {
  it('shows header chips, context above the options, labels as written', () => {
    setup()
    expect(screen.getByTestId('question-header-0')).toHaveTextContent('布局')
    expect(screen.getByTestId('question-header-1')).toHaveTextContent('检查')
    const ctx = screen.getByTestId('question-context-0')
    expect(ctx.tagName).toBe('PRE')
    expect(ctx.textContent).toBe('diff --git a/x b/x\n+ new line')
    // The context precedes the options in document order.
    expect(ctx.compareDocumentPosition(screen.getByTestId('q0-option-0')) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy()
    expect(screen.getByLabelText(/两栏 \(Recommended\)/)).toHaveAttribute('type', 'radio')
    expect(screen.getByTestId('q1-option-0')).toHaveAttribute('type', 'checkbox')
    // Every question has an Other choice.
    expect(screen.getByTestId('q0-other')).toBeInTheDocument()
    expect(screen.getByTestId('q1-other')).toBeInTheDocument()
  })

  it('previews the focused option of a single-select question as text', async () => {
    const { user } = setup()
    const pre = screen.getByTestId('q0-preview')
    expect(pre.tagName).toBe('PRE')
    expect(pre.textContent).toContain('| nav  | main |')
    await user.click(screen.getByTestId('q0-option-1'))
    expect(pre.textContent).toBe(EVIL)
    expect(document.querySelector('img')).toBeNull()
    fireEvent.focus(screen.getByTestId('q0-option-0'))
    expect(pre.textContent).toContain('| nav  | main |')
    // Multi-select questions have no preview.
    expect(screen.queryByTestId('q1-preview')).toBeNull()
  })

  it('needs every question answered, then sends answers with labels and Other', async () => {
    const { user, onSubmit } = setup()
    const submit = screen.getByTestId('submit')
    expect(submit).toBeDisabled()
    await user.click(screen.getByTestId('q0-option-0'))
    expect(submit).toBeDisabled()
    await user.click(screen.getByTestId('q1-option-1'))
    await user.click(screen.getByTestId('q1-option-0'))
    await user.type(screen.getByTestId('q1-other-input'), '还要 e2e')
    expect(screen.getByTestId('q1-other')).toBeChecked()
    await user.click(submit)
    expect(onSubmit).toHaveBeenCalledExactlyOnceWith({
      selections: [],
      customInput: '',
      cancelled: false,
      answers: [
        { question: '用哪种布局？', selected: ['两栏 (Recommended)'], other: '' },
        { question: '要哪些检查？', selected: ['test', 'lint'], other: '还要 e2e' },
      ],
    })
  })

  it('Other on a single-select question replaces the chosen option', async () => {
    const { user, onSubmit } = setup()
    await user.click(screen.getByTestId('q0-option-0'))
    await user.type(screen.getByTestId('q0-other-input'), '三栏')
    expect(screen.getByTestId('q0-option-0')).not.toBeChecked()
    expect(screen.getByTestId('q0-other')).toBeChecked()
    await user.click(screen.getByTestId('q1-option-0'))
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit.mock.calls[0][0].answers[0]).toEqual({ question: '用哪种布局？', selected: [], other: '三栏' })
  })

  it('422 details land next to their question', () => {
    setup({
      fieldErrors: [
        { field: 'answers[1].selected', message: 'unknown label "x"' },
        { field: 'answers', message: 'need 2 answers' },
      ],
    })
    expect(screen.getByTestId('question-1')).toHaveTextContent('unknown label "x"')
    expect(screen.getByTestId('question-0')).not.toHaveTextContent('unknown label')
    expect(screen.getByTestId('field-error-answers')).toHaveTextContent('need 2 answers')
    expect(screen.queryByTestId('card-error')).toBeNull()
  })

  it('Other is a labelled textarea whose line breaks reach the answer', async () => {
    const { user, onSubmit } = setup()
    const other = screen.getByRole('textbox', { name: '其他: 要哪些检查？' })
    expect(other).toBe(screen.getByTestId('q1-other-input'))
    expect(other.tagName).toBe('TEXTAREA')
    await user.click(screen.getByTestId('q0-option-0'))
    await user.type(other, '还要 e2e{Shift>}{Enter}{/Shift}和 fuzz')
    expect(onSubmit).not.toHaveBeenCalled()
    // Enter (without Shift) in Other submits like a one-line field.
    await user.keyboard('{Enter}')
    expect(onSubmit.mock.calls[0][0].answers[1]).toEqual({ question: '要哪些检查？', selected: [], other: '还要 e2e\n和 fuzz' })
  })

  it('Enter with a question open moves the focus there and says which; number keys then act on it', async () => {
    const { user, onSubmit } = setup()
    screen.getByTestId('q0-option-0').focus()
    await user.keyboard('1')
    expect(screen.getByTestId('q0-option-0')).toBeChecked()
    expect(screen.getByTestId('batch-status')).toHaveTextContent('')
    await user.keyboard('{Enter}')
    expect(onSubmit).not.toHaveBeenCalled()
    expect(screen.getByTestId('q1-option-0')).toHaveFocus()
    expect(screen.getByTestId('batch-status')).toHaveTextContent('还有 1 题未答：第 2 题')
    expect(screen.getByTestId('submit')).not.toHaveAttribute('aria-keyshortcuts')
    await user.keyboard('2')
    expect(screen.getByTestId('q1-option-1')).toBeChecked()
    expect(screen.getByTestId('q0-option-0')).toBeChecked()
    expect(screen.getByTestId('q0-option-1')).not.toBeChecked()
    expect(screen.getByTestId('submit')).toHaveAttribute('aria-keyshortcuts', 'Enter Control+Enter')
  })

  it('typing in Other selects Other and the preview follows it', async () => {
    const { user } = setup()
    await user.click(screen.getByTestId('q0-option-1'))
    expect(screen.getByTestId('q0-preview-label')).toHaveTextContent('单栏')
    await user.tab()
    expect(screen.getByTestId('q0-other-input')).toHaveFocus()
    await user.keyboard('13')
    expect(screen.getByTestId('q0-other')).toBeChecked()
    expect(screen.getByTestId('q0-option-1')).not.toBeChecked()
    expect(screen.getByTestId('q0-preview-label')).toHaveTextContent('其他')
    expect(screen.getByTestId('q0-preview').textContent).toBe('13')
  })

  it('the receipt lists each question with its answer', () => {
    const receipt: Receipt = {
      requestId: 'ask_9',
      toolCallId: 'call_9',
      status: 'answered',
      selections: [],
      customInput: '',
      answers: [
        { question: '用哪种布局？', selected: ['两栏 (Recommended)'], other: '' },
        { question: '要哪些检查？', selected: ['lint'], other: '还要 e2e' },
      ],
      resolvedAt: '2026-03-01T08:00:00Z',
    }
    setup({ phase: 'resolved', receipt })
    expect(screen.getByTestId('receipt-answer-0')).toHaveTextContent('用哪种布局？两栏 (Recommended)')
    expect(screen.getByTestId('receipt-answer-1')).toHaveTextContent('lint；其他: 还要 e2e')
    expect(screen.queryByTestId('receipt-selections')).toBeNull()
    expect(screen.queryByTestId('run-status')).toBeNull()
  })

  it('bidi controls in questions, headers, context, labels, previews and the receipt show as markers; answers keep raw labels', async () => {
    const RLO = '\u202E'
    const request: InputRequest = {
      ...askUser(),
      questions: [
        {
          question: `下载哪个？${RLO}`,
          header: `文\u2067件`,
          context: `ctx\u200E`,
          multi_select: false,
          options: [
            { label: `gnp${RLO}.exe`, description: `d${RLO}`, preview: `p${RLO}` },
            { label: '都不要', description: '', preview: 'none' },
          ],
        },
      ],
    }
    const { user, onSubmit, rerender, card } = setup({ request })
    const el = screen.getByTestId('input-card')
    expect(screen.getByTestId('question-0')).toHaveTextContent('下载哪个？⟨U+202E⟩')
    expect(screen.getByTestId('question-header-0')).toHaveTextContent('文⟨U+2067⟩件')
    expect(screen.getByTestId('question-context-0').textContent).toBe('ctx⟨U+200E⟩')
    expect(screen.getByLabelText(/gnp⟨U\+202E⟩\.exe/)).toBe(screen.getByTestId('q0-option-0'))
    expect(el).toHaveTextContent('d⟨U+202E⟩')
    expect(screen.getByTestId('q0-preview').textContent).toBe('p⟨U+202E⟩')
    expect(screen.getByTestId('q0-other-input')).toHaveAttribute('aria-label', '其他: 下载哪个？⟨U+202E⟩')
    expect(el.textContent).not.toMatch(/[\u200E\u200F\u202A-\u202E\u2066-\u2069]/)
    await user.click(screen.getByTestId('q0-option-0'))
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit.mock.calls[0][0].answers).toEqual([{ question: `下载哪个？${RLO}`, selected: [`gnp${RLO}.exe`], other: '' }])

    const receipt: Receipt = {
      requestId: 'ask_9',
      toolCallId: 'call_9',
      status: 'answered',
      selections: [],
      customInput: '',
      answers: [{ question: `下载哪个？${RLO}`, selected: [`gnp${RLO}.exe`], other: `o${RLO}` }],
      resolvedAt: '2026-03-01T08:00:00Z',
    }
    rerender({ ...card, phase: 'resolved', receipt })
    expect(screen.getByTestId('receipt-answer-0')).toHaveTextContent('下载哪个？⟨U+202E⟩gnp⟨U+202E⟩.exe；其他: o⟨U+202E⟩')
    expect(screen.getByTestId('receipt').textContent).not.toMatch(/[\u200E\u200F\u202A-\u202E\u2066-\u2069]/)
  })
})
