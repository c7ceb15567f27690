import { render, screen } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import type { CardItem, ToolItem } from 'luban-react'
import { LangContext } from '../i18n'
import { ToolCallView } from './ToolCallView'

function setup(item: Partial<ToolItem>, approval?: CardItem) {
  const full: ToolItem = { kind: 'tool', key: 'k', toolCallId: 'c1', name: 'read_file', arguments: '{}', ...item }
  render(
    <LangContext.Provider value="zh">
      <ToolCallView item={full} approval={approval} />
    </LangContext.Provider>,
  )
  return { el: screen.getByTestId('tool-call') }
}

describe('ToolCallView', () => {
  it('shows bidi controls in the name, arguments and result as markers', () => {
    const { el } = setup({
      name: 'read\u202Efile',
      arguments: '{"path":"gnp\u202E.exe"}',
      result: { content: 'ok \u2066x\u2069', isError: false },
    })
    expect(el).toHaveTextContent('read⟨U+202E⟩file')
    expect(el).toHaveTextContent('"path": "gnp⟨U+202E⟩.exe"')
    expect(screen.getByTestId('tool-result')).toHaveTextContent('ok ⟨U+2066⟩x⟨U+2069⟩')
    expect(el.textContent).not.toMatch(/[\u200E\u200F\u202A-\u202E\u2066-\u2069]/)
  })
  it('reads a rejected approval as rejected, not as an error', () => {
    const approval = { kind: 'input', key: 'a', request: { id: 'ap', toolCallId: 'c1', mode: 'approval' }, phase: 'resolved', receipt: { requestId: 'ap', toolCallId: 'c1', status: 'answered', decision: 'reject', selections: [], customInput: '', resolvedAt: '' } } as unknown as CardItem
    const { el } = setup({ name: 'write_file', result: { content: 'rejected by the user', isError: true } }, approval)
    expect(screen.getByTestId('tool-state')).toHaveTextContent('已拒绝')
    expect(el).not.toHaveTextContent('错误')
    expect(el).not.toHaveClass('tool-error')
  })

  it('says a call waits for approval while its card is open', () => {
    const approval = { kind: 'input', key: 'a', request: { id: 'ap', toolCallId: 'c1', mode: 'approval' }, phase: 'editing' } as unknown as CardItem
    setup({ name: 'write_file' }, approval)
    expect(screen.getByTestId('tool-state')).toHaveTextContent('等待批准')
    expect(screen.getByTestId('tool-state')).not.toHaveTextContent('运行中')
  })

  it('says running for a call with no approval and no result', () => {
    setup({})
    expect(screen.getByTestId('tool-state')).toHaveTextContent('运行中')
  })
})
