import { render, screen } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import type { ToolItem } from 'luban-react'
import { LangContext } from '../i18n'
import { ToolCallView } from './ToolCallView'

function setup(item: Partial<ToolItem>) {
  const full: ToolItem = { kind: 'tool', key: 'k', toolCallId: 'c1', name: 'read_file', arguments: '{}', ...item }
  render(
    <LangContext.Provider value="zh">
      <ToolCallView item={full} />
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
})
