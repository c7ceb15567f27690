import { render, screen, waitFor, within } from '@testing-library/react'
import userEvent from '@testing-library/user-event'
import { Api, type SessionSummary } from 'luban-react'
import { describe, expect, it } from 'vitest'
import { json, startServer } from '../../packages/luban-react/src/test/server'
import { LangContext } from '../i18n'
import { matches, SessionList } from './SessionList'

const NOW = '2026-03-01T08:00:00Z'
const session = (id: string, title: string, status = 'completed'): SessionSummary => ({ id, title, status, createdAt: NOW, updatedAt: NOW, agent: 'default' })

describe('SessionList', () => {
  it('matches every word of the query in the title or id, any case', () => {
    const s = session('sess_ab', 'Quarterly 报告 Draft')
    expect(matches(s, 'quarterly')).toBe(true)
    expect(matches(s, 'DRAFT 报告')).toBe(true)
    expect(matches(s, 'sess_ab')).toBe(true)
    expect(matches(s, 'quarterly final')).toBe(false)
  })

  it('shows a session title with bidi and control characters as markers, in the row and in its buttons names', () => {
    render(<SessionList api={new Api({ base: 'http://127.0.0.1:1' })} sessions={[session('s1', 'Approve invoice \u202Egpj.exe'), session('s2', 'a\u0000b\u202E evil')]} onOpen={() => undefined} onChanged={() => undefined} />)
    expect(within(screen.getByTestId('session-s1')).getByText('Approve invoice ⟨U+202E⟩gpj.exe')).toBeInTheDocument()
    expect(within(screen.getByTestId('session-s2')).getByText('a⟨U+0000⟩b⟨U+202E⟩ evil')).toBeInTheDocument()
    expect(screen.getByRole('button', { name: '重命名: Approve invoice ⟨U+202E⟩gpj.exe' })).toBeInTheDocument()
    expect(document.body.textContent).not.toMatch(/[\u0000\u202E]/)
  })

  it('renames with PATCH and deletes: a waiting question asked about once with ?force=true, an active run asked again', async () => {
    const srv = await startServer({
      'PATCH /api/sessions/s1': json(200, session('s1', '新标题')),
      'DELETE /api/sessions/s2': json(200, { sessionId: 's2', deleted: true }),
      'DELETE /api/sessions/s3': (req, res) => {
        const forced = (req.url ?? '').endsWith('?force=true')
        json(forced ? 200 : 409, forced ? { sessionId: 's3', deleted: true } : { error: { code: 'run_in_progress', message: 'active' } })(req, res, null)
      },
    })
    const changed: [string, boolean][] = []
    const user = userEvent.setup()
    render(
      <SessionList
        api={new Api({ base: srv.base })}
        sessions={[session('s1', '旧标题'), session('s2', '等回答的', 'waiting_input'), session('s3', '运行中的', 'running')]}
        onOpen={() => undefined}
        onChanged={(id, deleted) => changed.push([id, deleted])}
      />,
    )
    await user.type(screen.getByTestId('session-search'), '运行')
    expect(screen.queryByTestId('session-s2')).toBeNull()
    expect(screen.queryByTestId('session-s1')).toBeNull()
    await user.clear(screen.getByTestId('session-search'))

    await user.click(screen.getByRole('button', { name: '重命名: 旧标题' }))
    await user.clear(screen.getByTestId('rename-input'))
    await user.type(screen.getByTestId('rename-input'), '新标题{Enter}')
    await waitFor(() => expect(changed).toEqual([['s1', false]]))
    expect(srv.requests.find((r) => r.method === 'PATCH')?.body).toEqual({ title: '新标题' })

    // The confirm opens with the focus on Cancel; Esc closes it, back to the row.
    await user.click(screen.getByRole('button', { name: '删除: 运行中的' }))
    expect(screen.getByTestId('delete-no')).toHaveFocus()
    await user.keyboard('{Escape}')
    expect(screen.queryByTestId('delete-confirm')).toBeNull()
    expect(screen.getByTestId('session-s3')).toHaveFocus()

    // A waiting question: said so (not "still running"), one confirmation, forced.
    await user.click(screen.getByRole('button', { name: '删除: 等回答的' }))
    const waiting = screen.getByTestId('delete-confirm')
    expect(waiting).toHaveTextContent('有问题在等待回答')
    expect(waiting).not.toHaveTextContent('任务仍在运行')
    expect(within(waiting).getByTestId('delete-no')).toHaveFocus()
    await user.click(within(waiting).getByTestId('delete-force'))
    await waitFor(() => expect(changed).toEqual([['s1', false], ['s2', true]]))

    // An active run: asked again before ?force=true.
    await user.click(screen.getByRole('button', { name: '删除: 运行中的' }))
    await user.click(within(screen.getByTestId('delete-confirm')).getByTestId('delete-yes'))
    await waitFor(() => expect(screen.getByTestId('delete-confirm')).toHaveTextContent('任务仍在运行'))
    expect(changed).toHaveLength(2)
    await user.click(screen.getByTestId('delete-force'))
    await waitFor(() => expect(changed).toEqual([['s1', false], ['s2', true], ['s3', true]]))
    expect(srv.requests.filter((r) => r.method === 'DELETE').map((r) => r.url)).toEqual(['/api/sessions/s2?force=true', '/api/sessions/s3', '/api/sessions/s3?force=true'])
  })
})

describe('SessionList times', () => {
  it('says how long ago a session changed, in the page language, the exact time as its title', () => {
    const three = new Date(Date.now() - 3 * 60_000 - 5_000).toISOString()
    const rows = [{ ...session('a', '甲'), updatedAt: three }, { ...session('b', '乙'), updatedAt: new Date().toISOString() }]
    const ui = (lang: 'zh' | 'en') => (
      <LangContext.Provider value={lang}>
        <SessionList api={new Api({ base: 'http://127.0.0.1:9' })} sessions={rows} onOpen={() => {}} onChanged={() => {}} />
      </LangContext.Provider>
    )
    const r = render(ui('zh'))
    expect(screen.getByTestId('session-time-a')).toHaveTextContent(/^3分钟前$/)
    expect(screen.getByTestId('session-time-a')).toHaveAttribute('dateTime', three)
    expect(screen.getByTestId('session-time-a').getAttribute('title')).toMatch(/\d{4}\/\d{1,2}\/\d{1,2}/)
    expect(screen.getByTestId('session-time-b')).toHaveTextContent(/^刚刚$/)
    r.rerender(ui('en'))
    expect(screen.getByTestId('session-time-a')).toHaveTextContent(/^3 minutes ago$/)
    expect(screen.getByTestId('session-time-b')).toHaveTextContent(/^just now$/)
  })
})

describe('SessionList titles', () => {
  it('a session without a title reads as untitled in the page language, never as its id; the time says which one it is', () => {
    const rows = [session('sess_untitled1', ''), session('sess_b', '有标题')]
    const ui = (lang: 'zh' | 'en') => (
      <LangContext.Provider value={lang}>
        <SessionList api={new Api({ base: 'http://127.0.0.1:9' })} sessions={rows} onOpen={() => {}} onChanged={() => {}} />
      </LangContext.Provider>
    )
    const r = render(ui('zh'))
    const row = screen.getByTestId('session-sess_untitled1')
    expect(screen.getByTestId('session-title-sess_untitled1')).toHaveTextContent(/^未命名会话$/)
    expect(screen.getByTestId('session-title-sess_untitled1')).toHaveClass('session-title-untitled')
    expect(row).not.toHaveTextContent('sess_untitled1')
    expect(screen.getByTestId('session-time-sess_untitled1')).toBeInTheDocument()
    expect(screen.getByRole('button', { name: '重命名: 未命名会话' })).toBeInTheDocument()
    expect(screen.getByTestId('session-title-sess_b')).toHaveTextContent(/^有标题$/)
    expect(screen.getByTestId('session-title-sess_b')).not.toHaveClass('session-title-untitled')
    r.rerender(ui('en'))
    expect(screen.getByTestId('session-title-sess_untitled1')).toHaveTextContent(/^Untitled session$/)
  })
})
