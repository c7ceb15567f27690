import { render, screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it, vi } from 'vitest'
import type { CardItem } from '../card'
import { LangContext, type Lang } from '../i18n'
import type { FieldError, InputRequest, Receipt } from '../types'
import { descriptionIn, parseArguments, type ApprovalReceipt, type ApprovalRequest } from './approval'
import { UserInputCard } from './UserInputCard'

const FUTURE = new Date(Date.now() + 3600_000).toISOString()

const schema = {
  type: 'object',
  properties: { path: { type: 'string', minLength: 1 }, content: { type: 'string' } },
  required: ['path', 'content'],
  additionalProperties: false,
}

function approvalReq(over: Partial<ApprovalRequest> = {}): InputRequest {
  const r: ApprovalRequest = {
    id: 'ask_1',
    toolCallId: 'call_1',
    sessionId: 's1',
    runId: 'r1',
    tool: 'approval',
    mode: 'approval',
    title: 'Run write_file?',
    toolName: 'write_file',
    description: 'Writes a text file in the workspace.',
    arguments: { path: 'notes/plan.md', content: '# Plan <b>bold</b>\n', lines: 2, ok: true, none: null },
    argumentsSchema: { ...schema, additionalProperties: true },
    createdAt: new Date().toISOString(),
    expiresAt: FUTURE,
    resumable: true,
    ...over,
  }
  return r as unknown as InputRequest
}

function setup(over: Partial<CardItem> = {}, req: Partial<ApprovalRequest> = {}, lang: Lang = 'en') {
  const card: CardItem = { kind: 'input', key: 'k', phase: 'editing', request: approvalReq(req), ...over }
  const onSubmit = vi.fn()
  const onCancel = vi.fn()
  const user = userEvent.setup()
  const ui = (c: CardItem) => (
    <LangContext.Provider value={lang}>
      <UserInputCard card={c} onSubmit={onSubmit} onCancel={onCancel} />
    </LangContext.Provider>
  )
  const r = render(ui(card))
  return { card, onSubmit, onCancel, user, rerender: (c: CardItem) => r.rerender(ui(c)) }
}

describe('approval card (docs/design.md §10)', () => {
  it('shows a built-in tool\'s bilingual description in the page language only, any other whole', () => {
    const both = 'Writes a text file in the workspace (replacing it whole; missing directories are created). 在工作区中写入文本文件。'
    expect(descriptionIn(both, 'en')).toBe('Writes a text file in the workspace (replacing it whole; missing directories are created).')
    expect(descriptionIn(both, 'zh')).toBe('在工作区中写入文本文件。')
    for (const d of ['Deploys the service.', '部署服务。', 'Runs 部署 now.', ''])
      for (const l of ['zh', 'en'] as const) expect(descriptionIn(d, l)).toBe(d)
    setup({}, { description: both }, 'zh')
    expect(screen.getByTestId('approval-description')).toHaveTextContent(/^在工作区中写入文本文件。$/)
  })

  it('says whom a routed approval waits for, with the approvals of its quorum (docs/design.md §16)', () => {
    const waitingFor = { names: ['finance'], awaiting: [{ id: 'carol', name: 'Carol' }], quorum: 2, approvals: [{ id: 'bob', name: 'Bob' }] }
    setup({}, { waitingFor } as Partial<ApprovalRequest>)
    expect(screen.getByTestId('waiting-for')).toHaveTextContent(/^waiting for finance \(1 of 2 approved\)$/)
  })

  it('says it in Chinese too', () => {
    const waitingFor = { names: ['finance', 'Alice'], awaiting: [], quorum: 1, approvals: [] }
    setup({}, { waitingFor } as Partial<ApprovalRequest>, 'zh')
    expect(screen.getByTestId('waiting-for')).toHaveTextContent(/^等待 finance、Alice$/)
  })

  it('shows the tool, its description and the arguments as coloured JSON, as text', () => {
    setup()
    expect(screen.getByRole('heading', { name: 'Run write_file?' })).toBeInTheDocument()
    expect(screen.getByTestId('approval-tool')).toHaveTextContent('write_file')
    expect(screen.getByTestId('approval-description')).toHaveTextContent('Writes a text file in the workspace.')
    expect(screen.getAllByText(/Writes a text file/)).toHaveLength(1)
    const args = screen.getByTestId('approval-arguments')
    expect(args.querySelector('.json-key')).toHaveTextContent('"path"')
    expect(args.querySelector('.json-string')).toHaveTextContent('"notes/plan.md"')
    expect(args.querySelector('.json-number')).toHaveTextContent('2')
    expect(args.querySelector('.json-bool')).toHaveTextContent('true')
    expect(args.querySelector('.json-null')).toHaveTextContent('null')
    expect(args.querySelector('b')).toBeNull()
    expect(args).toHaveTextContent('<b>bold</b>')
  })

  it('approve, with and without "always allow in this session"', async () => {
    const { user, onSubmit } = setup()
    await user.click(screen.getByTestId('approval-approve'))
    expect(onSubmit).toHaveBeenLastCalledWith({ decision: 'approve', cancelled: false })
    await user.click(screen.getByTestId('approval-remember'))
    await user.click(screen.getByTestId('approval-approve'))
    expect(onSubmit).toHaveBeenLastCalledWith({ decision: 'approve', cancelled: false, remember: 'session' })
  })

  it('edit: an invalid value is caught before sending, a valid one is sent parsed', async () => {
    const { user, onSubmit } = setup({}, { arguments: { path: 'a.md', content: 'x' }, argumentsSchema: schema })
    await user.click(screen.getByTestId('approval-edit'))
    const editor = screen.getByTestId('approval-editor') as HTMLTextAreaElement
    expect(JSON.parse(editor.value)).toEqual({ path: 'a.md', content: 'x' })
    await user.clear(editor)
    await user.type(editor, '{{"path": "", "content": 3}')
    await user.click(screen.getByTestId('approval-send-edit'))
    expect(onSubmit).not.toHaveBeenCalled()
    const errs = screen.getByTestId('field-error-arguments')
    // Worded by their codes (fieldErrorText), not the schema library's English.
    expect(errs).toHaveTextContent('Wrong type: expected text')
    expect(errs).toHaveTextContent('Too short: at least 1 character')
    await user.clear(editor)
    await user.type(editor, '{{"path": "b.md"')
    await user.click(screen.getByTestId('approval-send-edit'))
    expect(screen.getByTestId('field-error-arguments')).toHaveTextContent('Not valid JSON')
    await user.clear(editor)
    await user.type(editor, '{{"path": "b.md", "content": "y"}')
    await user.click(screen.getByTestId('approval-send-edit'))
    expect(onSubmit).toHaveBeenLastCalledWith({ decision: 'edit', arguments: { path: 'b.md', content: 'y' }, cancelled: false })
  })

  it("shows the server's 422 details under the editor and keeps it open", () => {
    setup({ fieldErrors: [{ field: 'arguments.path', message: 'minLength: got 0, want 1' }] })
    expect(screen.getByTestId('approval-editor')).toBeInTheDocument()
    expect(screen.getByTestId('field-error-arguments')).toHaveTextContent('minLength: got 0, want 1')
  })

  it("hides the server's details about the arguments once the edited text changes, and shows the next ones", async () => {
    const first: FieldError[] = [{ field: 'arguments.path', code: 'outside_workspace', message: '"../x" leads outside the workspace' }]
    const { user, card, rerender } = setup({ fieldErrors: first })
    expect(screen.getByTestId('field-error-arguments')).toHaveTextContent('inside the workspace')
    await user.type(screen.getByTestId('approval-editor'), ' ')
    expect(screen.queryByTestId('field-error-arguments')).toBeNull()
    expect(screen.getByTestId('approval-editor')).toHaveAttribute('aria-invalid', 'false')
    rerender({ ...card, fieldErrors: [{ field: 'arguments.path', message: 'minLength: got 0, want 1' }] })
    expect(screen.getByTestId('field-error-arguments')).toHaveTextContent('minLength: got 0, want 1')
  })

  it('reject with an optional reason; cancel stops the run', async () => {
    const { user, onSubmit, onCancel } = setup()
    await user.click(screen.getByTestId('approval-reject'))
    await user.type(screen.getByTestId('approval-reason'), 'write it under docs/')
    await user.click(screen.getByTestId('approval-confirm-reject'))
    expect(onSubmit).toHaveBeenLastCalledWith({ decision: 'reject', cancelled: false, message: 'write it under docs/' })
    await user.clear(screen.getByTestId('approval-reason'))
    await user.click(screen.getByTestId('approval-confirm-reject'))
    expect(onSubmit).toHaveBeenLastCalledWith({ decision: 'reject', cancelled: false })
    await user.click(screen.getByTestId('cancel'))
    expect(onCancel).not.toHaveBeenCalled()
    await user.click(screen.getByTestId('cancel-yes'))
    expect(onCancel).toHaveBeenCalledOnce()
  })

  it('works with the keyboard alone', async () => {
    const { user, onSubmit } = setup()
    await user.tab()
    // The arguments view is focusable (it scrolls), then the remember box, then approve.
    expect(screen.getByTestId('approval-arguments')).toHaveFocus()
    await user.tab()
    expect(screen.getByTestId('approval-remember')).toHaveFocus()
    await user.keyboard(' ')
    await user.tab()
    expect(screen.getByTestId('approval-approve')).toHaveFocus()
    await user.keyboard('{Enter}')
    expect(onSubmit).toHaveBeenLastCalledWith({ decision: 'approve', cancelled: false, remember: 'session' })
  })

  it('the receipt shows the decision, the edited arguments and the reason', () => {
    const base = { requestId: 'ask_1', toolCallId: 'call_1', status: 'answered', resolvedAt: new Date().toISOString() } as const
    const edited: ApprovalReceipt = { ...base, decision: 'edit', arguments: { path: 'b.md', content: 'y' }, remember: 'session' }
    const { rerender, card } = setup({ phase: 'resolved', receipt: edited as unknown as Receipt })
    expect(screen.getByTestId('receipt-status')).toHaveTextContent('Approved with edits')
    expect(screen.getByTestId('receipt-arguments')).toHaveTextContent('"b.md"')
    expect(screen.getByTestId('receipt-remember')).toHaveTextContent('Always allowed in this session')
    const rejected: ApprovalReceipt = { ...base, decision: 'reject', message: 'not now' }
    rerender({ ...card, phase: 'resolved', receipt: rejected as unknown as Receipt })
    expect(screen.getByTestId('receipt-status')).toHaveTextContent('Rejected')
    expect(screen.getByTestId('receipt-message')).toHaveTextContent('not now')
    expect(screen.queryByTestId('receipt-arguments')).toBeNull()
    rerender({ ...card, phase: 'resolved', receipt: { ...base, status: 'cancelled' } as unknown as Receipt })
    expect(screen.getByTestId('receipt-status')).toHaveTextContent('Cancelled')
  })

  it('Chinese by default', () => {
    setup({}, {}, 'zh')
    expect(screen.getByTestId('approval-approve')).toHaveTextContent('批准')
    expect(screen.getByTestId('approval-reject')).toHaveTextContent('拒绝')
    // The heading is the page's wording, not the request's English title.
    expect(screen.getByRole('heading', { name: '运行 write_file？' })).toBeInTheDocument()
    expect(screen.queryByText('Run write_file?')).toBeNull()
  })
})

describe('parseArguments', () => {
  it('checks like the server, with its codes and params: required, unknown fields, types, enums, lengths, items', () => {
    const s = { type: 'object', properties: { n: { type: 'integer' }, e: { enum: ['a', 'b'] }, xs: { type: 'array', items: { type: 'string' } } }, required: ['n'], additionalProperties: false }
    expect(parseArguments('{"n": 1.5, "e": "c", "xs": ["a", 2], "z": 1}', s).errors).toEqual([
      { field: 'arguments.e', code: 'enum', params: { allowed: ['a', 'b'] }, message: 'must be one of "a", "b"' },
      { field: 'arguments.n', code: 'invalid_type', params: { expected: 'integer', got: 'number' }, message: 'got number, want integer' },
      { field: 'arguments.xs[1]', code: 'invalid_type', params: { expected: 'string', got: 'integer' }, message: 'got integer, want string' },
      { field: 'arguments.z', code: 'unknown_field', message: "unknown field: the tool's schema does not allow it" },
    ])
    expect(parseArguments('{}', s).errors).toEqual([{ field: 'arguments.n', code: 'required', message: 'required but missing' }])
    expect(parseArguments('[1]', s).errors).toEqual([{ field: 'arguments', code: 'invalid_type', params: { expected: 'object', got: 'array' }, message: 'must be a JSON object' }])
    expect(parseArguments('{"p": ""}', { type: 'object', properties: { p: { type: 'string', minLength: 1, maxLength: 3 } } }).errors).toEqual([
      { field: 'arguments.p', code: 'too_short', params: { min: 1, got: 0, unit: 'characters' }, message: 'minLength: got 0, want 1' },
    ])
    expect(parseArguments('{x', s).errors).toMatchObject([{ field: 'arguments', code: 'invalid_json' }])
    expect(parseArguments('{"n": 2}', s)).toEqual({ value: { n: 2 }, errors: [] })
  })
})
