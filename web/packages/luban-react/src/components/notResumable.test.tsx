import { render, screen } from '@testing-library/react'
import { describe, expect, it, vi } from 'vitest'
import type { CardItem } from '../card'
import { cardDicts, LangContext, type Lang } from '../i18n'
import type { InputRequest } from '../types'
import { UserInputCard } from './UserInputCard'

const request: InputRequest = {
  id: 'ask_n',
  toolCallId: 'call_n',
  sessionId: 's_n',
  runId: 'r1',
  tool: 'ask_user',
  title: '继续吗？',
  mode: 'single',
  options: [{ id: 'a', label: 'A' }],
  createdAt: new Date().toISOString(),
  expiresAt: new Date(Date.now() + 3600_000).toISOString(),
  resumable: true,
}

function shown(code: string | undefined, lang: Lang): string {
  const card: CardItem = { kind: 'input', key: 'k', phase: 'not_resumable', request, ...(code ? { error: { code, message: 'server text', status: 404 } } : {}) }
  const r = render(
    <LangContext.Provider value={lang}>
      <UserInputCard card={card} onSubmit={vi.fn()} onCancel={vi.fn()} />
    </LangContext.Provider>,
  )
  const text = screen.getByTestId('not-resumable').textContent ?? ''
  r.unmount()
  return text
}

describe('a card that cannot be answered says why, by the error code', () => {
  for (const lang of ['zh', 'en'] as const) {
    const t = cardDicts[lang]
    it(`in ${lang}: 404 session_not_found, 404 interaction_not_found, 410 not_resumable, and resumable: false`, () => {
      expect(shown('session_not_found', lang)).toBe(t.sessionGone)
      expect(shown('interaction_not_found', lang)).toBe(t.interactionGone)
      expect(shown('not_resumable', lang)).toBe(t.notResumable)
      expect(shown(undefined, lang)).toBe(t.notResumable)
      // Each cause its own sentence, never the server's English text.
      expect(new Set([t.sessionGone, t.interactionGone, t.notResumable]).size).toBe(3)
      expect(shown('session_not_found', lang)).not.toContain('server text')
    })
  }
})
