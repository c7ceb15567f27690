import { render } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { describe, expect, it } from 'vitest'
import { emptySession as initialState, reduceSession as reduce, type MessageItem } from 'luban-react'
import type { Transcript } from 'luban-react'
import { Reasoning } from './Reasoning'

const thinking = '先想想 <b>部署</b> <img src=x onerror=alert(1)>\n**不是** markdown \u202E'

describe('Reasoning', () => {
  it('is folded by default and shows the thinking as plain text when opened', async () => {
    const { getByTestId } = render(<Reasoning text={thinking} />)
    const details = getByTestId('reasoning') as HTMLDetailsElement
    expect(details.tagName).toBe('DETAILS')
    expect(details.open).toBe(false)
    expect(details.querySelector('summary')).toHaveTextContent('思考过程')
    const text = getByTestId('reasoning-text')
    expect(text).not.toBeVisible()
    await userEvent.click(details.querySelector('summary')!)
    expect(details.open).toBe(true)
    expect(text).toBeVisible()
    expect(text.textContent).toBe(thinking.replace('\u202E', '⟨U+202E⟩'))
    for (const tag of ['b', 'img', 'strong', 'em']) expect(details.querySelector(tag)).toBeNull()
  })
})

describe('reasoning in the chat state', () => {
  const ev = (event: string, data: unknown) => ({ type: 'event' as const, event: { event, data, id: null } })
  const messages = (s: typeof initialState) => s.items.filter((i): i is MessageItem => i.kind === 'message')

  it('a message event keeps reasoning apart from the streamed content', () => {
    let s = reduce(initialState, ev('message_delta', { messageId: 'm1', delta: '答案' }))
    s = reduce(s, ev('message', { messageId: 'm1', role: 'assistant', content: '答案', reasoning: thinking }))
    expect(messages(s)).toMatchObject([{ id: 'm1', content: '答案', reasoning: thinking, streaming: false }])
  })

  it('reasoning_delta streams the thinking onto the bubble, apart from the text; the message event has the last word', () => {
    let s = reduce(initialState, ev('reasoning_delta', { messageId: 'm4', delta: '先' }))
    s = reduce(s, ev('reasoning_delta', { messageId: 'm4', delta: '想想' }))
    expect(messages(s)).toMatchObject([{ id: 'm4', content: '', reasoning: '先想想', streaming: true }])
    s = reduce(s, ev('message_delta', { messageId: 'm4', delta: '答' }))
    expect(messages(s)).toMatchObject([{ id: 'm4', content: '答', reasoning: '先想想', streaming: true }])
    s = reduce(s, ev('message', { messageId: 'm4', role: 'assistant', content: '答案', reasoning: '先想想，完整' }))
    expect(messages(s)).toMatchObject([{ id: 'm4', content: '答案', reasoning: '先想想，完整', streaming: false }])
    // A replayed delta after the final message changes nothing.
    expect(reduce(s, ev('reasoning_delta', { messageId: 'm4', delta: 'x' }))).toBe(s)
  })

  it('a tool-call turn with reasoning and no text still shows, for its reasoning', () => {
    const s = reduce(initialState, ev('message', { messageId: 'm2', role: 'assistant', content: '', reasoning: '只有思考' }))
    expect(messages(s)).toMatchObject([{ id: 'm2', content: '', reasoning: '只有思考' }])
    const none = reduce(initialState, ev('message', { messageId: 'm3', role: 'assistant', content: '' }))
    expect(messages(none)).toHaveLength(0)
  })

  it('the transcript carries reasoning, and old servers without it still load', () => {
    const t: Transcript = {
      session: { id: 's', title: '', status: 'completed', createdAt: '', updatedAt: '' } as never,
      lastEventId: 0,
      messages: [
        { id: 'a', runId: 'r', role: 'assistant', content: '', reasoning: '想', createdAt: '', toolCalls: [{ id: 'c', name: 'x', arguments: '{}' }] },
        { id: 'b', runId: 'r', role: 'assistant', content: '完', createdAt: '' },
      ],
      interactions: [],
      errors: [],
    }
    const s = reduce(initialState, { type: 'transcript', transcript: t })
    expect(messages(s).map((m) => [m.id, m.content, m.reasoning])).toEqual([
      ['a', '', '想'],
      ['b', '完', undefined],
    ])
  })
})
