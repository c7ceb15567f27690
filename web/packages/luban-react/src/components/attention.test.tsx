// Issue 18, polish round: the cards' cancel confirmation (one wording on
// every card that ends the task), the batch hint naming the open
// questions, where the focus goes after a failed submit, and sentence-case
// English button labels.
import { render, screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it, vi } from 'vitest'
import type { CardItem } from '../card'
import { RetryContext } from '../cardRetry'
import { LangContext, type Lang } from '../i18n'
import type { InputRequest } from '../types'
import { UserInputCard } from './UserInputCard'

const FUTURE = new Date(Date.now() + 3600_000).toISOString()
const base = { toolCallId: 'call_1', sessionId: 's1', runId: 'r1', createdAt: new Date().toISOString(), expiresAt: FUTURE, resumable: true }

const single: InputRequest = {
  ...base,
  id: 'ask_1',
  tool: 'ask_user',
  title: '请选择执行方式',
  mode: 'single',
  options: [
    { id: 'safe', label: '先分析', recommended: true },
    { id: 'implement', label: '直接实现' },
  ],
}

const opts = (a: string, b: string) => [
  { label: a, description: a },
  { label: b, description: b },
]
const batch: InputRequest = {
  ...base,
  id: 'ask_2',
  tool: 'AskUser',
  title: '布局？',
  mode: 'questions',
  questions: [
    { question: '布局？', header: '布局', multi_select: false, options: opts('网格', '列表') },
    { question: '平台？', header: '平台', multi_select: true, options: opts('Linux', 'macOS') },
    { question: '主题？', header: '主题', multi_select: false, options: opts('浅色', '深色') },
  ],
}

const approval = {
  ...base,
  id: 'ask_3',
  tool: 'approval',
  mode: 'approval',
  title: 'Run write_file?',
  toolName: 'write_file',
  arguments: { path: 'a.md', content: 'x' },
} as unknown as InputRequest

function setup(request: InputRequest, lang: Lang = 'zh', over: Partial<CardItem> = {}, retry: ((c: CardItem) => void) | null = null) {
  const card: CardItem = { kind: 'input', key: 'k', phase: 'editing', request, ...over }
  const onSubmit = vi.fn()
  const onCancel = vi.fn()
  const user = userEvent.setup()
  const ui = (c: CardItem) => (
    <LangContext.Provider value={lang}>
      <RetryContext.Provider value={retry}>
        <UserInputCard card={c} onSubmit={onSubmit} onCancel={onCancel} />
      </RetryContext.Provider>
    </LangContext.Provider>
  )
  const r = render(ui(card))
  return { card, onSubmit, onCancel, user, rerender: (c: CardItem) => r.rerender(ui(c)) }
}

describe('Cancel the task: one wording, confirmed first', () => {
  it.each([
    ['zh', 'ask_user', single, '取消任务', '继续回答'],
    ['zh', 'AskUser', batch, '取消任务', '继续回答'],
    ['zh', 'approval', approval, '取消任务', '继续回答'],
    ['en', 'ask_user', single, 'Cancel the task', 'Keep answering'],
    ['en', 'AskUser', batch, 'Cancel the task', 'Keep answering'],
    ['en', 'approval', approval, 'Cancel the task', 'Keep answering'],
  ] as const)('%s %s: asks, the focus on the safe choice; Esc and Keep answering close; only the confirm cancels', async (lang, _kind, req, cancel, keep) => {
    const { user, onCancel } = setup(req, lang)
    const button = screen.getByTestId('cancel')
    expect(button).toHaveTextContent(new RegExp(`^${cancel}$`))
    await user.click(button)
    expect(onCancel).not.toHaveBeenCalled()
    const confirm = screen.getByTestId('cancel-confirm')
    expect(confirm).toHaveAccessibleName(lang === 'zh' ? /取消任务？/ : /Cancel the task\?/)
    expect(screen.getByTestId('cancel-no')).toHaveFocus()
    expect(screen.getByTestId('cancel-no')).toHaveTextContent(keep)
    expect(screen.getByTestId('cancel-yes')).toHaveTextContent(cancel)
    await user.keyboard('{Escape}')
    expect(screen.queryByTestId('cancel-confirm')).toBeNull()
    expect(screen.getByTestId('cancel')).toHaveFocus()
    await user.keyboard('{Enter}')
    await user.click(screen.getByTestId('cancel-no'))
    expect(screen.getByTestId('cancel')).toHaveFocus()
    expect(onCancel).not.toHaveBeenCalled()
    await user.click(screen.getByTestId('cancel'))
    await user.click(screen.getByTestId('cancel-yes'))
    expect(onCancel).toHaveBeenCalledOnce()
  })
})

describe('the batch hint names the open questions', () => {
  it.each([
    ['zh', '还有 3 题未答：第 1、2、3 题', '还有 2 题未答：第 1、3 题', '还有 1 题未答：第 3 题'],
    ['en', '3 unanswered: questions 1, 2 and 3', '2 unanswered: questions 1 and 3', '1 unanswered: question 3'],
  ] as const)('%s: which ones, and pressing it goes to the first', async (lang, all, two, one) => {
    const { user } = setup(batch, lang)
    const hint = screen.getByTestId('hint')
    expect(hint).toHaveTextContent(all)
    expect(screen.getByTestId('submit')).toHaveAccessibleDescription(all)
    await user.click(screen.getByTestId('q1-option-0'))
    expect(hint).toHaveTextContent(two)
    await user.click(hint)
    expect(screen.getByTestId('q0-option-0')).toHaveFocus()
    await user.keyboard('{ArrowDown}')
    expect(screen.getByTestId('hint')).toHaveTextContent(one)
    screen.getByTestId('hint').focus()
    await user.keyboard('{Enter}')
    expect(screen.getByTestId('q2-option-0')).toHaveFocus()
    await user.click(screen.getByTestId('q2-option-1'))
    expect(screen.queryByTestId('hint')).toBeNull()
  })
})

describe('after a failed submit the focus goes to what needs attention', () => {
  const network = { code: 'network', message: 'Failed to fetch', status: 0 }

  it('a network error on a question: the retry, described by the error', async () => {
    const answer = { selections: ['safe'], customInput: '', cancelled: false }
    const { user, rerender, card } = setup(single, 'en', {}, vi.fn())
    await user.click(screen.getByTestId('option-safe'))
    screen.getByTestId('submit').focus()
    rerender({ ...card, phase: 'submitting', lastAnswer: answer })
    expect(screen.getByTestId('submit')).toBeDisabled()
    rerender({ ...card, phase: 'editing', lastAnswer: answer, error: network })
    const retry = screen.getByTestId('retry')
    expect(retry).toHaveFocus()
    expect(retry).toHaveAccessibleDescription(/Cannot reach the server/)
    expect(screen.getByTestId('card-error')).toHaveAttribute('role', 'alert')
  })

  it('without a retry (the inbox): the submit', async () => {
    const { user, rerender, card } = setup(single, 'zh')
    await user.click(screen.getByTestId('option-safe'))
    rerender({ ...card, phase: 'submitting' })
    rerender({ ...card, phase: 'editing', error: network, lastAnswer: { selections: ['safe'], customInput: '', cancelled: false } })
    expect(screen.getByTestId('submit')).toHaveFocus()
  })

  it('a 422 on a batch question: its first choice, marked invalid and described by the message', async () => {
    const { user, rerender, card } = setup(batch, 'zh')
    for (const id of ['q0-option-0', 'q1-option-0', 'q2-option-0']) await user.click(screen.getByTestId(id))
    rerender({ ...card, phase: 'submitting' })
    rerender({ ...card, phase: 'editing', fieldErrors: [{ field: 'answers[1].selected', code: 'too_many', params: { max: 1, got: 2 }, message: 'too many' }] })
    const first = screen.getByTestId('q1-option-0')
    expect(first).toHaveFocus()
    expect(first).toHaveAttribute('aria-invalid', 'true')
    expect(screen.getByTestId('q0-option-0')).not.toHaveAttribute('aria-invalid')
    const msg = screen.getByTestId('field-error-answers[1]')
    expect(msg).toHaveAttribute('role', 'alert')
    expect(first.getAttribute('aria-describedby')?.split(' ')).toContain(msg.id)
  })

  it('a 5xx on an approval: the retry', () => {
    const answer = { selections: [], customInput: '', cancelled: false }
    const { rerender, card } = setup(approval, 'zh', {}, vi.fn())
    screen.getByTestId('approval-approve').focus()
    rerender({ ...card, phase: 'submitting', lastAnswer: answer })
    rerender({ ...card, phase: 'editing', lastAnswer: answer, error: { code: 'internal_error', message: 'boom', status: 500 } })
    expect(screen.getByTestId('retry')).toHaveFocus()
  })

  it('a card that never failed takes no focus', () => {
    const { rerender, card } = setup(single, 'zh')
    rerender({ ...card, error: network })
    expect(document.body).toHaveFocus()
  })
})

describe('English button labels are in sentence case', () => {
  it('Accept recommended, and every card button starts with a capital', async () => {
    const { user } = setup(single, 'en')
    expect(screen.getByTestId('accept-recommended')).toHaveTextContent(/^Accept recommended: 先分析$/)
    await user.click(screen.getByTestId('cancel'))
    for (const b of screen.getAllByRole('button')) expect(b.textContent).toMatch(/^[A-Z]/)
  })

  it('the approval card', () => {
    setup(approval, 'en')
    for (const b of screen.getAllByRole('button')) expect(b.textContent).toMatch(/^[A-Z]/)
  })
})
