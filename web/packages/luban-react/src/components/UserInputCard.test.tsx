import { cleanup, fireEvent, render, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it, vi } from 'vitest'
import type { CardItem } from '../card'
import { LangContext, type Lang } from '../i18n'
import type { InputRequest, Receipt } from '../types'
import { UserInputCard } from './UserInputCard'

const FUTURE = new Date(Date.now() + 3600_000).toISOString()

function req(over: Partial<InputRequest> = {}): InputRequest {
  return {
    id: 'ask_1',
    toolCallId: 'call_1',
    sessionId: 's1',
    runId: 'r1',
    tool: 'ask_user',
    title: '请选择执行方式',
    description: '不同方式会影响接下来的工具权限。',
    mode: 'single',
    options: [
      { id: 'safe', label: '先分析', description: '只阅读并给出方案', recommended: true },
      { id: 'implement', label: '直接实现', description: '开始修改工作区' },
    ],
    createdAt: new Date().toISOString(),
    expiresAt: FUTURE,
    resumable: true,
    ...over,
  }
}

function setup(over: Omit<Partial<CardItem>, 'request'> & { request?: Partial<InputRequest> } = {}, lang: Lang = 'zh') {
  const { request, ...rest } = over
  const card: CardItem = { kind: 'input', key: 'k', phase: 'editing', ...rest, request: req(request) }
  const onSubmit = vi.fn()
  const onCancel = vi.fn()
  const onExpire = vi.fn()
  const user = userEvent.setup()
  const ui = (c: CardItem) => (
    <LangContext.Provider value={lang}>
      <UserInputCard card={c} onSubmit={onSubmit} onCancel={onCancel} onExpire={onExpire} />
    </LangContext.Provider>
  )
  const r = render(ui(card))
  return { card, onSubmit, onCancel, onExpire, user, rerender: (c: CardItem) => r.rerender(ui(c)) }
}

describe('UserInputCard modes (docs/design.md §A.3 table)', () => {
  it('single: radios, one selection, recommended marked, descriptions, submitLabel', async () => {
    const { user, onSubmit } = setup({ request: { submitLabel: '继续' } })
    expect(screen.getByRole('heading', { name: '请选择执行方式' })).toBeInTheDocument()
    expect(screen.getByText('不同方式会影响接下来的工具权限。')).toBeInTheDocument()
    expect(screen.getByText('只阅读并给出方案')).toBeInTheDocument()
    expect(screen.getByTestId('recommended-safe')).toHaveTextContent('推荐')
    expect(screen.queryByTestId('recommended-implement')).toBeNull()
    expect(screen.getByTestId('option-safe')).toHaveAttribute('type', 'radio')
    const submit = screen.getByTestId('submit')
    expect(submit).toHaveTextContent('继续')
    expect(submit).toBeDisabled()
    expect(screen.getByTestId('hint')).toHaveTextContent('请选择一项')
    expect(screen.queryByTestId('custom-input')).toBeNull()

    await user.click(screen.getByLabelText(/先分析/))
    await user.click(screen.getByLabelText(/直接实现/))
    expect(screen.getByTestId('option-safe')).not.toBeChecked()
    await user.click(submit)
    expect(onSubmit).toHaveBeenCalledExactlyOnceWith({ selections: ['implement'], customInput: '', cancelled: false })
  })

  it('multiple + allowCustom: checkboxes and the 其他说明 box', async () => {
    const { user, onSubmit } = setup({ request: { mode: 'multiple', allowCustom: true } })
    expect(screen.getByTestId('option-safe')).toHaveAttribute('type', 'checkbox')
    expect(screen.getByLabelText('其他说明')).toBe(screen.getByTestId('custom-input'))
    await user.click(screen.getByTestId('option-safe'))
    await user.click(screen.getByTestId('option-implement'))
    await user.click(screen.getByTestId('option-safe'))
    await user.click(screen.getByTestId('option-safe'))
    await user.type(screen.getByTestId('custom-input'), '只改 README')
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).toHaveBeenCalledExactlyOnceWith({ selections: ['implement', 'safe'], customInput: '只改 README', cancelled: false })
  })

  it.each(['single', 'multiple', 'toggle'] as const)('%s + allowCustom: the 其他说明 box is a labelled textarea that keeps line breaks', async (mode) => {
    const { user, onSubmit } = setup({ request: { mode, allowCustom: true } })
    const box = screen.getByLabelText('其他说明')
    expect(box).toBe(screen.getByTestId('custom-input'))
    expect(box.tagName).toBe('TEXTAREA')
    await user.click(screen.getByTestId('option-implement'))
    // Enter in the box is a new line, not a submit.
    await user.type(box, '第一行{Enter}第二行')
    expect(onSubmit).not.toHaveBeenCalled()
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).toHaveBeenCalledExactlyOnceWith({ selections: ['implement'], customInput: '第一行\n第二行', cancelled: false })
  })

  it('number, date and directory keep their single-line typed inputs', () => {
    for (const [mode, type] of [
      ['number', 'number'],
      ['date', 'date'],
      ['directory', 'text'],
    ] as const) {
      const { unmount } = render(
        <UserInputCard card={{ kind: 'input', key: mode, phase: 'editing', request: req({ mode, options: undefined }) }} onSubmit={vi.fn()} onCancel={vi.fn()} />,
      )
      const box = screen.getByTestId('custom-input')
      expect(box.tagName).toBe('INPUT')
      expect(box).toHaveAttribute('type', type)
      unmount()
    }
  })

  it('number with bounds: the field says them, the input carries them, and an answer beyond them is refused here in the server\'s words', async () => {
    const bounded = { mode: 'number' as const, options: undefined, title: '副本数', integer: true, minimum: 1 }
    // The server's 422 for 0, as the page shows it.
    setup({ fieldErrors: [{ field: 'customInput', code: 'out_of_range', params: { min: 1 }, message: '0 is less than the minimum 1' }], request: bounded })
    const serverWords = screen.getByTestId('field-error-customInput').textContent
    expect(serverWords).toBe('不能小于 1')
    cleanup()

    const { user, onSubmit } = setup({ request: bounded })
    const input = screen.getByTestId('custom-input')
    expect(input).toHaveAttribute('min', '1')
    expect(input).not.toHaveAttribute('max')
    expect(input).toHaveAttribute('step', '1')
    expect(input).toHaveAttribute('inputmode', 'numeric')
    const hint = screen.getByTestId('number-hint')
    expect(hint).toHaveTextContent('不小于 1 的整数')
    expect(input.getAttribute('aria-describedby')).toContain(hint.id)
    await user.type(input, '0')
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).not.toHaveBeenCalled()
    expect(screen.getByTestId('field-error-customInput')).toHaveTextContent(serverWords!)
    expect(input).toHaveAttribute('aria-invalid', 'true')
    expect(input).toHaveFocus()
    // The problem follows the typing once shown: a fraction is not whole.
    await user.clear(input)
    await user.type(input, '2.5')
    expect(screen.getByTestId('field-error-customInput')).toHaveTextContent('类型不对，应为整数')
    await user.clear(input)
    await user.type(input, '3')
    expect(screen.queryByTestId('field-error-customInput')).toBeNull()
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).toHaveBeenCalledExactlyOnceWith({ selections: [], customInput: '3', cancelled: false })
  })

  it('number with bounds in English: a fraction allowed between both bounds', async () => {
    const { user, onSubmit } = setup({ request: { mode: 'number', options: undefined, minimum: 0.5, maximum: 2 } }, 'en')
    const input = screen.getByTestId('custom-input')
    expect(input).toHaveAttribute('min', '0.5')
    expect(input).toHaveAttribute('max', '2')
    expect(input).toHaveAttribute('step', 'any')
    expect(input).toHaveAttribute('inputmode', 'decimal')
    expect(screen.getByTestId('number-hint')).toHaveTextContent('A number from 0.5 to 2')
    await user.type(input, '3')
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).not.toHaveBeenCalled()
    expect(screen.getByTestId('field-error-customInput')).toHaveTextContent('Must be at most 2')
    await user.clear(input)
    await user.type(input, '0.25')
    expect(screen.getByTestId('field-error-customInput')).toHaveTextContent('Must be at least 0.5')
    await user.clear(input)
    await user.type(input, '1.5')
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).toHaveBeenCalledExactlyOnceWith({ selections: [], customInput: '1.5', cancelled: false })
  })

  it('number without bounds has no hint; a whole number alone says so', () => {
    setup({ request: { mode: 'number', options: undefined } })
    expect(screen.queryByTestId('number-hint')).toBeNull()
    cleanup()
    setup({ request: { mode: 'number', options: undefined, integer: true, maximum: -1 } }, 'en')
    expect(screen.getByTestId('number-hint')).toHaveTextContent('A whole number, at most -1')
    expect(screen.getByTestId('custom-input')).toHaveAttribute('inputmode', 'decimal')
  })

  it('toggle: switches, at least one on before submit', async () => {
    const { user, onSubmit } = setup({ request: { mode: 'toggle' } })
    const sw = screen.getByRole('switch', { name: /直接实现/ })
    expect(screen.getByTestId('submit')).toBeDisabled()
    expect(screen.getByTestId('hint')).toHaveTextContent('至少打开一项才能提交')
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).not.toHaveBeenCalled()
    await user.click(sw)
    expect(sw).toBeChecked()
    expect(screen.queryByTestId('hint')).toBeNull()
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).toHaveBeenCalledExactlyOnceWith({ selections: ['implement'], customInput: '', cancelled: false })
  })

  it.each([
    ['text', 'textarea', null, '用中文写', '用中文写'],
    ['number', 'input', 'number', '42.5', '42.5'],
    ['date', 'input', 'date', '2026-05-01', '2026-05-01'],
    ['directory', 'input', 'text', 'src/app', 'src/app'],
  ] as const)('%s: the free-input control, value in customInput', async (mode, tag, type, typed, sent) => {
    const { user, onSubmit } = setup({ request: { mode, options: undefined, allowCustom: true } })
    const input = screen.getByTestId('custom-input')
    expect(input.tagName.toLowerCase()).toBe(tag)
    if (type) expect(input).toHaveAttribute('type', type)
    // No 其他说明 box in free-input modes, even with allowCustom.
    expect(screen.queryByText('其他说明')).toBeNull()
    expect(screen.queryByTestId('option-safe')).toBeNull()
    expect(screen.getByTestId('submit')).toBeDisabled()
    if (mode === 'directory') expect(screen.getByTestId('directory-hint')).toHaveTextContent('相对路径')
    await user.type(input, typed)
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).toHaveBeenCalledExactlyOnceWith({ selections: [], customInput: sent, cancelled: false })
  })

  it('cancel has its own button and is never validated', async () => {
    const { user, onCancel, onSubmit } = setup({ request: { mode: 'toggle' } })
    await user.click(screen.getByTestId('cancel'))
    await user.click(screen.getByTestId('cancel-yes'))
    expect(onCancel).toHaveBeenCalledOnce()
    expect(onSubmit).not.toHaveBeenCalled()
  })

  it('shows the expiry time and reports expiry once it passed', () => {
    const { onExpire } = setup({ request: { expiresAt: '2000-01-01T00:00:00Z' } })
    expect(screen.getByTestId('expires-at')).toHaveTextContent('有效期至')
    expect(onExpire).toHaveBeenCalledOnce()
  })

  it('renders every model string as text, never as HTML', () => {
    const evil = '<img src=x onerror=alert(1)>'
    setup({
      request: { title: evil, description: evil, allowCustom: true, options: [{ id: 'x', label: evil, description: evil }] },
    })
    const el = screen.getAllByTestId('input-card')[0]
    expect(el.querySelector('img')).toBeNull()
    expect(within(el).getByRole('heading')).toHaveTextContent(evil)
    // title, description, option label, option description
    expect(within(el).getAllByText(evil)).toHaveLength(4)
  })

  it('English strings by the switch', () => {
    setup({ request: { mode: 'toggle' } }, 'en')
    expect(screen.getByTestId('cancel')).toHaveTextContent('Cancel the task')
    expect(screen.getByTestId('hint')).toHaveTextContent('Turn on at least one to submit')
  })
})

describe('UserInputCard errors and receipts', () => {
  it('422 keeps the card editable with each message next to its field', async () => {
    const { user, rerender, card, onSubmit } = setup({ request: { mode: 'multiple', allowCustom: true } })
    await user.click(screen.getByTestId('option-safe'))
    await user.type(screen.getByTestId('custom-input'), 'abc')
    rerender({ ...card, phase: 'submitting' })
    expect(screen.getByTestId('submit')).toHaveTextContent('提交中')
    expect(screen.getByTestId('option-safe')).toBeDisabled()
    rerender({
      ...card,
      phase: 'editing',
      fieldErrors: [
        { field: 'selections', message: 'unknown option id "zzz"' },
        { field: 'customInput', message: '自定义内容过长' },
        { field: 'other', message: 'something else' },
      ],
    })
    expect(screen.getByTestId('field-error-selections')).toHaveTextContent('unknown option id "zzz"')
    expect(screen.getByTestId('field-error-customInput')).toHaveTextContent('自定义内容过长')
    expect(screen.getByTestId('card-error')).toHaveTextContent('other: something else')
    // What the user typed is kept and the card can be submitted again.
    expect(screen.getByTestId('option-safe')).toBeChecked()
    expect(screen.getByTestId('custom-input')).toHaveValue('abc')
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).toHaveBeenCalledOnce()
  })

  it('a text answer near the bound shows a counter, over it a marked one', async () => {
    setup({ request: { mode: 'text', options: [] } })
    const box = screen.getByTestId('custom-input')
    fireEvent.change(box, { target: { value: 'x'.repeat(7199) } })
    expect(screen.queryByTestId('text-counter')).toBeNull()
    fireEvent.change(box, { target: { value: 'x'.repeat(7200) } })
    expect(screen.getByTestId('text-counter')).toHaveTextContent('7,200 / 8,000 字')
    expect(screen.getByTestId('text-counter')).not.toHaveAttribute('data-over')
    // Code points, as the server counts: an emoji is one.
    fireEvent.change(box, { target: { value: '😀'.repeat(8001) } })
    expect(screen.getByTestId('text-counter')).toHaveTextContent('8,001 / 8,000 字，超出 1 字')
    expect(screen.getByTestId('text-counter')).toHaveAttribute('data-over', 'true')
  })

  it('a 413 naming its field shows the limit by that field', () => {
    setup({ request: { mode: 'text', options: [] }, fieldErrors: [{ field: 'customInput', code: 'too_long', params: { max: 8000, got: 9000, unit: 'characters' }, message: 'customInput is longer than 8000 characters' } as never] })
    expect(screen.getByTestId('field-error-customInput')).toHaveTextContent('最多 8000')
    expect(screen.queryByTestId('card-error')).toBeNull()
  })

  it('413 shows the too-large message on an editable card', () => {
    setup({ error: { code: 'payload_too_large', message: 'body too large' } })
    expect(screen.getByTestId('card-error')).toHaveTextContent('内容太长')
    expect(screen.getByTestId('submit')).toBeInTheDocument()
  })

  it('an answered receipt shows labels, custom text and time: its own resolution, not the run\'s', () => {
    const receipt: Receipt = {
      requestId: 'ask_1',
      toolCallId: 'call_1',
      status: 'answered',
      selections: ['safe', 'implement'],
      customInput: '只改 README',
      resolvedAt: '2026-03-01T08:00:00Z',
    }
    setup({ phase: 'resolved', receipt })
    const r = screen.getByTestId('receipt')
    expect(r).toHaveAttribute('data-status', 'answered')
    expect(screen.getByTestId('receipt-status')).toHaveTextContent('已提交')
    expect(screen.getByTestId('receipt-selections')).toHaveTextContent('先分析、直接实现')
    expect(screen.getByTestId('receipt-custom')).toHaveTextContent('只改 README')
    expect(screen.getByTestId('receipt-time')).toHaveTextContent('提交时间')
    expect(screen.getByTestId('receipt-time').querySelector('time')).toHaveAttribute('dateTime', receipt.resolvedAt)
    expect(screen.queryByTestId('run-status')).toBeNull()
    expect(screen.queryByTestId('submit')).toBeNull()
    expect(screen.queryByRole('radio')).toBeNull()
  })

  it('a cancelled receipt and an expired receipt with one time, when it expired', () => {
    const base = { requestId: 'ask_1', toolCallId: 'call_1', selections: [], customInput: '', resolvedAt: '2026-03-01T08:00:00Z' }
    const { rerender, card } = setup({ phase: 'resolved', receipt: { ...base, status: 'cancelled' } })
    expect(screen.getByTestId('receipt-status')).toHaveTextContent('已取消')
    expect(screen.queryByTestId('run-status')).toBeNull()
    expect(screen.queryByTestId('receipt-selections')).toBeNull()
    rerender({ ...card, receipt: { ...base, status: 'expired' } })
    expect(screen.getByTestId('receipt')).toHaveAttribute('data-status', 'expired')
    expect(screen.getByTestId('receipt-status')).toHaveTextContent('已超时')
    expect(screen.getByTestId('receipt-time')).toHaveTextContent('超时时间')
    expect(screen.getByTestId('receipt-time').querySelector('time')).toHaveAttribute('dateTime', base.resolvedAt)
    // Only the one time: not "expires at" beside "expired at".
    expect(screen.queryByTestId('receipt-expires')).toBeNull()
    expect(screen.getByTestId('receipt')).not.toHaveTextContent('有效期至')
    expect(screen.getByTestId('receipt').querySelectorAll('time')).toHaveLength(1)
  })

  it('not resumable: only the notice, nothing to send', () => {
    setup({ phase: 'not_resumable', request: { resumable: false } })
    expect(screen.getByTestId('not-resumable')).toHaveTextContent('服务已重启，请重新发起任务')
    expect(screen.queryByTestId('submit')).toBeNull()
    expect(screen.queryByTestId('cancel')).toBeNull()
    expect(screen.queryByRole('radio')).toBeNull()
  })

  it('bidi controls in model strings show as markers on the card and its receipt; the answer keeps option ids', async () => {
    const RLO = '\u202E'
    const { user, onSubmit, rerender, card } = setup({
      request: {
        title: `下载 gnp${RLO}.exe？`,
        description: `文件 a\u2066b\u2069`,
        submitLabel: `好${RLO}`,
        allowCustom: true,
        options: [
          { id: 'png', label: `gnp${RLO}.exe`, description: `\u200F说明` },
          { id: 'skip', label: '跳过' },
        ],
      },
    })
    const el = screen.getByTestId('input-card')
    expect(screen.getByRole('heading')).toHaveTextContent('下载 gnp⟨U+202E⟩.exe？')
    expect(el).toHaveAttribute('aria-label', '下载 gnp⟨U+202E⟩.exe？')
    expect(el).toHaveTextContent('文件 a⟨U+2066⟩b⟨U+2069⟩')
    expect(el).toHaveTextContent('gnp⟨U+202E⟩.exe')
    expect(el).toHaveTextContent('⟨U+200F⟩说明')
    expect(screen.getByTestId('submit')).toHaveTextContent('好⟨U+202E⟩')
    expect(el.textContent).not.toMatch(/[\u200E\u200F\u202A-\u202E\u2066-\u2069]/)
    await user.click(screen.getByTestId('option-png'))
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).toHaveBeenCalledExactlyOnceWith({ selections: ['png'], customInput: '', cancelled: false })

    const receipt: Receipt = {
      requestId: 'ask_1',
      toolCallId: 'call_1',
      status: 'answered',
      selections: ['png', `x${RLO}y`],
      customInput: `备注${RLO}`,
      resolvedAt: '2026-03-01T08:00:00Z',
    }
    rerender({ ...card, phase: 'resolved', receipt })
    const r = screen.getByTestId('receipt')
    expect(r).toHaveTextContent('下载 gnp⟨U+202E⟩.exe？')
    expect(screen.getByTestId('receipt-selections')).toHaveTextContent('gnp⟨U+202E⟩.exe、x⟨U+202E⟩y')
    expect(screen.getByTestId('receipt-custom')).toHaveTextContent('备注⟨U+202E⟩')
    expect(r.textContent).not.toMatch(/[\u200E\u200F\u202A-\u202E\u2066-\u2069]/)
  })
})
