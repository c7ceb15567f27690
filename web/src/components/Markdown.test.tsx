import { render, screen, waitFor } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { Markdown, safeHref } from './Markdown'

function setup(text: string) {
  const { container } = render(<Markdown text={text} />)
  const root = container.querySelector('.markdown')!
  return { root }
}

describe('Markdown', () => {
  it('shows a leading HTML tag as text and keeps the Markdown after it', () => {
    const { root } = setup('<script>x</script> **bold**')
    expect(root).toHaveTextContent('<script>x</script> bold')
    expect(root.querySelector('strong')).toHaveTextContent('bold')
    expect(root.querySelector('script')).toBeNull()
    expect(root.querySelectorAll('*:not(p):not(strong)')).toHaveLength(0)
  })

  it('keeps HTML blocks, inline tags and comments as literal text, creating no element', () => {
    const text = '<div onclick="x()">\n*hi*\n</div>\n\ntext <img src=x onerror=alert(1)> and <b>b</b> `code`\n\n<!-- note -->\n\n- item'
    const { root } = setup(text)
    expect(root).toHaveTextContent('<div onclick="x()">')
    expect(root).toHaveTextContent('</div>')
    expect(root).toHaveTextContent('text <img src=x onerror=alert(1)> and <b>b</b> code')
    expect(root).toHaveTextContent('<!-- note -->')
    expect(root.querySelector('em')).toHaveTextContent('hi')
    expect(root.querySelector('code')).toHaveTextContent('code')
    expect(root.querySelector('li')).toHaveTextContent('item')
    for (const tag of ['div', 'img', 'b', 'script']) expect(root.querySelector(tag)).toBeNull()
  })

  it('keeps ordinary Markdown: headings, links, autolinks, code blocks; unsafe links lose their URL', () => {
    const { root } = setup('# T\n\n[a](https://example.com) <https://x.test/p> [j](javascript:alert(1))\n\n```\n<b>raw</b>\n```')
    expect(root.querySelector('h1')).toHaveTextContent('T')
    const links = [...root.querySelectorAll('a')].map((a) => [a.getAttribute('href'), a.getAttribute('target'), a.getAttribute('rel')])
    expect(links).toEqual([
      ['https://example.com', '_blank', 'noopener noreferrer'],
      ['https://x.test/p', '_blank', 'noopener noreferrer'],
    ])
    // The unsafe link keeps its text, as text.
    expect(root.querySelector('.md-link-text')).toHaveTextContent('j')
    expect(root.querySelector('pre code')).toHaveTextContent('<b>raw</b>')
  })

  it('shows bidirectional controls in assistant text as markers', () => {
    const { root } = setup('open `gnp\u202E.exe` or gnp\u202E.exe')
    expect(root).toHaveTextContent('open gnp⟨U+202E⟩.exe or gnp⟨U+202E⟩.exe')
    expect(root.textContent).not.toContain('\u202E')
  })

  it('shows images as links, so the text makes no request', () => {
    const { root } = setup('see ![x](/?token=other) and ![](https://example.com/a.png "t") and ![r][ref] ![j](javascript:alert(1))\n\n[ref]: /api/sessions')
    expect(root.querySelector('img')).toBeNull()
    const links = [...root.querySelectorAll('a.md-image')].map((a) => [a.textContent, a.getAttribute('href')])
    expect(links).toEqual([
      ['🖼 x', '/?token=other'],
      ['🖼 https://example.com/a.png', 'https://example.com/a.png'],
      ['🖼 r', '/api/sessions'],
    ])
    // An unsafe URL loses it: the label stays, as text.
    expect(root).toHaveTextContent('🖼 j')
    expect(root.querySelectorAll('img, picture, source, video, audio, iframe, object, embed')).toHaveLength(0)
  })

  it('renders GFM: tables, task lists, strikethrough, autolink literals', () => {
    const { root } = setup('| 名称 | 数量 |\n|:--|--:|\n| 苹果 | 3 |\n| <b>梨</b> | 5 |\n\n- [x] 完成\n- [ ] 待办\n\n~~旧的~~ 见 www.example.com')
    const table = root.querySelector('.table-wrap table')!
    expect([...table.querySelectorAll('th')].map((c) => c.textContent)).toEqual(['名称', '数量'])
    expect([...table.querySelectorAll('tbody tr')].map((r) => [...r.querySelectorAll('td')].map((c) => c.textContent))).toEqual([
      ['苹果', '3'],
      ['<b>梨</b>', '5'],
    ])
    expect(table.querySelector('b')).toBeNull()
    expect(root).not.toHaveTextContent('|')
    const boxes = [...root.querySelectorAll<HTMLInputElement>('li input[type="checkbox"]')]
    expect(boxes.map((b) => [b.checked, b.disabled, b.getAttribute('aria-label')])).toEqual([
      [true, true, '已完成'],
      [false, true, '未完成'],
    ])
    expect(root.querySelector('del')).toHaveTextContent('旧的')
    expect(root.querySelector('a')).toHaveAttribute('href', 'http://www.example.com')
  })

  it('allows only absolute http, https and mailto link targets', () => {
    expect(safeHref('https://a.test/x')).toBe('https://a.test/x')
    expect(safeHref('mailto:a@b.test')).toBe('mailto:a@b.test')
    for (const bad of ['javascript:alert(1)', 'data:text/html,x', '/api/sessions', '#x', 'vbscript:x', 'file:///etc/passwd', '', undefined]) {
      expect(safeHref(bad)).toBeNull()
    }
  })

  it('highlights a fenced block lazily and copies the code as written', async () => {
    const code = 'func main() {\n\tfmt.Println("<b>hi</b>")\n}'
    const { root } = setup('```go\n' + code + '\n```\n\n```\nplain text\n```')
    const [goBlock, plain] = screen.getAllByTestId('code-block')
    expect(goBlock).toHaveAttribute('data-lang', 'go')
    // The text is there at once; the highlighted spans follow the lazy import.
    expect(goBlock.querySelector('code')!.textContent).toBe(code)
    await waitFor(() => expect(goBlock.querySelector('code')).toHaveAttribute('data-highlighted', 'true'))
    expect(goBlock.querySelector('.hljs-keyword')).toHaveTextContent('func')
    expect(goBlock.querySelector('code')!.textContent).toBe(code)
    expect(root.querySelector('b')).toBeNull()
    expect(plain.querySelector('code')).not.toHaveAttribute('data-highlighted')

    const user = userEvent.setup()
    await user.click(goBlock.querySelector('button')!)
    expect(await navigator.clipboard.readText()).toBe(code)
    expect(goBlock.querySelector('button')).toHaveTextContent('已复制')
  })
})
