import { render, screen, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it, vi } from 'vitest'
import type { CardItem } from '../card'
import { LangContext, type Lang } from '../i18n'
import type { FormField, InputRequest, Receipt } from '../types'
import { checkForm, elicitationText, splitURL } from './elicitation'
import { UserInputCard } from './UserInputCard'

const FUTURE = new Date(Date.now() + 3600_000).toISOString()

const fields: FormField[] = [
  { name: 'name', title: 'Your name', type: 'string', required: true, minLength: 2, maxLength: 20, default: 'Ada' },
  { name: 'email', title: 'Email', type: 'string', required: false, format: 'email' },
  { name: 'age', title: 'Age', type: 'integer', required: true, minimum: 18, maximum: 120 },
  { name: 'score', title: 'Score', description: 'A decimal from 0 to 1', type: 'number', required: false, minimum: 0, maximum: 1, default: 0.5 },
  { name: 'subscribe', title: 'Subscribe', type: 'boolean', required: false, default: true },
  { name: 'start', title: 'Start date', type: 'date', required: false },
  { name: 'color', title: 'Colour', type: 'enum', required: true, options: [{ value: 'red', label: 'Red' }, { value: 'blue', label: 'Blue' }], default: 'blue' },
  { name: 'tags', title: 'Tags', type: 'multi', required: false, minItems: 1, maxItems: 2, options: [{ value: 'a', label: 'Alpha' }, { value: 'b', label: 'Beta' }, { value: 'c', label: 'Gamma' }] },
]

function req(over: Partial<InputRequest>): InputRequest {
  return {
    id: 'ask_1',
    toolCallId: 'call_1',
    sessionId: 's1',
    runId: 'r1',
    tool: 'elicitation',
    mode: 'form',
    title: 'Tell us about you',
    server: 'everything',
    createdAt: new Date().toISOString(),
    expiresAt: FUTURE,
    resumable: true,
    ...over,
  } as InputRequest
}

function setup(r: InputRequest, over: Partial<CardItem> = {}, lang: Lang = 'en') {
  const card: CardItem = { kind: 'input', key: 'k', phase: 'editing', request: r, ...over }
  const onSubmit = vi.fn()
  const onCancel = vi.fn()
  const user = userEvent.setup()
  const ui = (c: CardItem) => (
    <LangContext.Provider value={lang}>
      <UserInputCard card={c} onSubmit={onSubmit} onCancel={onCancel} />
    </LangContext.Provider>
  )
  const rr = render(ui(card))
  return { card, onSubmit, onCancel, user, rerender: (c: CardItem) => rr.rerender(ui(c)) }
}

describe('form elicitation card (docs/design.md §11)', () => {
  it('renders every field type with its label, required mark, bounds and default', () => {
    setup(req({ fields }))
    expect(screen.getByRole('heading', { name: 'Tell us about you' })).toBeInTheDocument()
    expect(screen.getByTestId('elicitation-server')).toHaveTextContent('everything')
    expect(screen.getByLabelText(/Your name/)).toHaveValue('Ada')
    expect(screen.getByLabelText(/Your name/)).toHaveAttribute('type', 'text')
    expect(screen.getByLabelText(/Email/)).toHaveAttribute('type', 'email')
    expect(screen.getByLabelText(/Age/)).toHaveAttribute('type', 'number')
    expect(screen.getByLabelText(/Age/)).toHaveAttribute('step', '1')
    expect(screen.getByLabelText(/Age/)).toHaveAttribute('min', '18')
    expect(screen.getByLabelText(/Score/)).toHaveValue(0.5)
    expect(screen.getByLabelText(/Score/)).toHaveAccessibleDescription(/A decimal from 0 to 1/)
    expect(screen.getByLabelText('Yes')).toBeChecked()
    expect(screen.getByLabelText(/Start date/)).toHaveAttribute('type', 'date')
    expect(screen.getByRole('radio', { name: 'Blue' })).toBeChecked()
    expect(screen.getByRole('checkbox', { name: 'Alpha' })).not.toBeChecked()
    for (const n of ['name', 'age', 'color']) expect(screen.getByTestId(`required-${n}`)).toBeInTheDocument()
    for (const n of ['email', 'score', 'subscribe', 'start', 'tags']) expect(screen.queryByTestId(`required-${n}`)).toBeNull()
    expect(screen.getByTestId('bounds-age')).toHaveTextContent('18–120')
    expect(screen.getByTestId('bounds-name')).toHaveTextContent('2–20 characters')
    expect(screen.getByTestId('bounds-tags')).toHaveTextContent('choose 1–2')
  })

  it('checks the values before sending: nothing is sent while a field is wrong, and the first wrong field gets focus', async () => {
    const { user, onSubmit } = setup(req({ fields }))
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).not.toHaveBeenCalled()
    expect(screen.getByTestId('field-error-content.age')).toHaveTextContent('Required')
    expect(screen.getByLabelText(/Age/)).toHaveFocus()
    await user.type(screen.getByLabelText(/Age/), '12')
    expect(screen.getByTestId('field-error-content.age')).toHaveTextContent('At least 18')
    await user.clear(screen.getByLabelText(/Age/))
    await user.type(screen.getByLabelText(/Age/), '30.5')
    expect(screen.getByTestId('field-error-content.age')).toHaveTextContent('whole number')
    await user.clear(screen.getByLabelText(/Age/))
    await user.type(screen.getByLabelText(/Age/), '30')
    await user.type(screen.getByLabelText(/Email/), 'not-an-email')
    await user.click(screen.getByRole('checkbox', { name: 'Alpha' }))
    await user.click(screen.getByRole('checkbox', { name: 'Beta' }))
    await user.click(screen.getByRole('checkbox', { name: 'Gamma' }))
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).not.toHaveBeenCalled()
    expect(screen.getByTestId('field-error-content.email')).toHaveTextContent('email')
    expect(screen.getByTestId('field-error-content.tags')).toHaveTextContent('at most 2')
    await user.clear(screen.getByLabelText(/Email/))
    await user.click(screen.getByRole('checkbox', { name: 'Gamma' }))
    await user.click(screen.getByRole('radio', { name: 'Red' }))
    await user.click(screen.getByLabelText('Yes'))
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).toHaveBeenCalledWith({
      decision: 'accept',
      cancelled: false,
      content: { name: 'Ada', age: 30, score: 0.5, subscribe: false, color: 'red', tags: ['a', 'b'] },
    })
  })

  it("shows the server's 422 details by their fields, and card-level ones above the actions", () => {
    setup(req({ fields }), {
      fieldErrors: [
        { field: 'content.name', message: 'name is taken' },
        { field: 'content', message: 'unexpected property x' },
      ],
    })
    expect(screen.getByTestId('field-error-content.name')).toHaveTextContent('name is taken')
    expect(screen.getByLabelText(/Your name/)).toHaveAttribute('aria-invalid', 'true')
    expect(screen.getByTestId('card-error')).toHaveTextContent('unexpected property x')
  })

  it('declines and cancels without checking the form', async () => {
    const { user, onSubmit, onCancel } = setup(req({ fields }))
    await user.click(screen.getByTestId('decline'))
    expect(onSubmit).toHaveBeenCalledWith({ decision: 'decline', cancelled: false })
    await user.click(screen.getByTestId('cancel'))
    expect(onCancel).toHaveBeenCalled()
  })

  it('renders what the server wrote as text', () => {
    setup(req({ title: '<img src=x onerror=alert(1)>', fields: [{ name: 'x', title: '<b>bold</b>', type: 'string', required: false }] }))
    expect(screen.getByRole('heading')).toHaveTextContent('<img src=x onerror=alert(1)>')
    expect(screen.getByLabelText('<b>bold</b>')).toBeInTheDocument()
    expect(document.querySelector('img, b')).toBeNull()
  })

  it('turns into a receipt with the values by field title, or declined', () => {
    const rec: Receipt = { requestId: 'ask_1', toolCallId: 'call_1', status: 'answered', selections: [], customInput: '', decision: 'accept',
      content: { name: 'Ada', color: 'red', tags: ['a', 'c'], subscribe: true }, resolvedAt: new Date().toISOString() }
    const { rerender } = setup(req({ fields }), { phase: 'resolved', receipt: rec })
    expect(screen.getByTestId('receipt-status')).toHaveTextContent('Accepted')
    expect(within(screen.getByTestId('receipt-field-name')).getByText('Your name')).toBeInTheDocument()
    expect(screen.getByTestId('receipt-field-color')).toHaveTextContent('Red')
    expect(screen.getByTestId('receipt-field-tags')).toHaveTextContent('Alpha、Gamma')
    rerender({ kind: 'input', key: 'k', request: req({ fields }), phase: 'resolved', receipt: { ...rec, decision: 'decline', content: undefined } })
    expect(screen.getByTestId('receipt-status')).toHaveTextContent('Declined')
    expect(screen.queryByTestId('receipt-content')).toBeNull()
    rerender({ kind: 'input', key: 'k', request: req({ fields }), phase: 'resolved', receipt: { ...rec, status: 'not_resumable', decision: undefined, content: undefined } })
    expect(screen.getByTestId('receipt-status')).toHaveTextContent('restarted')
    expect(screen.queryByTestId('receipt-content')).toBeNull()
  })
})

describe('url elicitation card (docs/design.md §11)', () => {
  const url = 'https://auth.example.com:8443/authorize?state=abc#frag'

  it('shows the full URL with the host highlighted and opens it only through a link in a new tab', async () => {
    const open = vi.spyOn(window, 'open')
    const before = window.location.href
    const { user, onSubmit } = setup(req({ mode: 'url', url, title: 'Sign in to continue' }))
    expect(screen.getByTestId('url-full')).toHaveTextContent(url)
    expect(screen.getByTestId('url-host')).toHaveTextContent('auth.example.com:8443')
    expect(screen.getByTestId('url-host').tagName).toBe('MARK')
    const a = screen.getByTestId('url-open')
    expect(a).toHaveAttribute('href', url)
    expect(a).toHaveAttribute('target', '_blank')
    expect(a.getAttribute('rel')).toContain('noopener')
    expect(a.getAttribute('rel')).toContain('noreferrer')
    expect(open).not.toHaveBeenCalled()
    expect(window.location.href).toBe(before)
    await user.click(screen.getByTestId('submit'))
    expect(onSubmit).toHaveBeenCalledWith({ decision: 'accept', cancelled: false })
    await user.click(screen.getByTestId('decline'))
    expect(onSubmit).toHaveBeenLastCalledWith({ decision: 'decline', cancelled: false })
    open.mockRestore()
  })

  it('shows an international host as the browser resolves it, and never links a non-http URL', () => {
    const { rerender } = setup(req({ mode: 'url', url: 'https://аpple.com/login' }))
    expect(screen.getByTestId('url-host').textContent).toMatch(/^xn--/)
    rerender({ kind: 'input', key: 'k', phase: 'editing', request: req({ mode: 'url', url: 'javascript:alert(1)' }) })
    expect(screen.queryByTestId('url-open')).toBeNull()
    expect(screen.getByTestId('url-not-openable')).toBeInTheDocument()
  })

  it('has its receipt say the person was done at the address', () => {
    setup(req({ mode: 'url', url }), {
      phase: 'resolved',
      receipt: { requestId: 'ask_1', toolCallId: 'call_1', status: 'answered', selections: [], customInput: '', decision: 'accept', resolvedAt: new Date().toISOString() },
    })
    expect(screen.getByTestId('receipt-status')).toHaveTextContent('Done at the address')
  })
})

describe('checkForm and splitURL', () => {
  const s = elicitationText.en
  it('leaves empty optional fields out and keeps booleans', () => {
    expect(checkForm([{ name: 'a', type: 'string', required: false }, { name: 'b', type: 'boolean', required: false }], {}, s)).toEqual({ content: { b: false }, errors: [] })
  })
  it('splits a URL with credentials around its host', () => {
    expect(splitURL('http://u:p@h.test/x')).toMatchObject({ before: 'http://u:p@', host: 'h.test', after: '/x', openable: true })
  })
})
