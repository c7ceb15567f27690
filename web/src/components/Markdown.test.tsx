import { render } from '@testing-library/react'
import { describe, expect, it } from 'vitest'
import { Markdown } from './Markdown'

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
    const links = [...root.querySelectorAll('a')].map((a) => a.getAttribute('href'))
    expect(links).toEqual(['https://example.com', 'https://x.test/p', ''])
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
})
