import { render, screen } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { LangContext } from '../i18n'
import type { Receipt } from '../types'
import { SignedMark } from './SignedMark'

const JWS = 'eyJhbGciOiJFZERTQSJ9.eyJyZXF1ZXN0SWQiOiJhc2tfMSJ9.c2ln'

function receipt(over: Partial<Receipt> = {}): Receipt {
  return {
    requestId: 'ask_1',
    toolCallId: 'call_1',
    status: 'answered',
    selections: [],
    customInput: '',
    resolvedAt: '2026-12-04T12:00:00Z',
    ...over,
  } as Receipt
}

describe('SignedMark', () => {
  const clipboard = Object.getOwnPropertyDescriptor(navigator, 'clipboard')
  afterEach(() => {
    vi.unstubAllGlobals()
    if (clipboard) Object.defineProperty(navigator, 'clipboard', clipboard)
    else delete (navigator as { clipboard?: unknown }).clipboard
  })

  it('shows nothing for an unsigned receipt', () => {
    const { container } = render(<SignedMark receipt={receipt()} />)
    expect(container).toBeEmptyDOMElement()
  })

  it('marks a signed receipt and lets the person copy its JWS', async () => {
    const writeText = vi.fn(() => Promise.resolve())
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true })
    render(
      <LangContext.Provider value="en">
        <SignedMark receipt={receipt({ signature: JWS })} />
      </LangContext.Provider>,
    )
    expect(screen.getByText('Signed')).toBeInTheDocument()
    expect(screen.getByTestId('receipt-jws')).toHaveValue(JWS)
    await userEvent.click(screen.getByText('Signed'))
    await userEvent.click(screen.getByTestId('receipt-copy'))
    expect(writeText).toHaveBeenCalledWith(JWS)
    expect(await screen.findByText('Copied')).toBeInTheDocument()
  })

  it('downloads the receipt as JSON for luban verify', async () => {
    const created: Blob[] = []
    vi.stubGlobal('URL', { ...URL, createObjectURL: (b: Blob) => (created.push(b), 'blob:receipt'), revokeObjectURL: () => {} })
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(() => {})
    render(<SignedMark receipt={receipt({ signature: JWS })} />)
    await userEvent.click(screen.getByTestId('receipt-download'))
    expect(click).toHaveBeenCalled()
    expect(created).toHaveLength(1)
    const body = JSON.parse(await created[0].text())
    expect(body.signature).toBe(JWS)
    expect(body.requestId).toBe('ask_1')
    click.mockRestore()
  })
})
