// The agents of a server on the page (docs/design.md §9): a picker for a new
// session when GET /api/agents lists more than one, and the name of a
// session's agent in the session header and the session list. Agent names
// and models come from the server's configuration; they are rendered as text.
import { visible, type AgentView } from 'luban-react'
import type { Dict } from '../i18n'

/**
 * showAgents reports whether the page names agents at all: when the server
 * has more than one, or when a session's agent is not the server's only
 * (default) agent (an agent since removed from the configuration).
 */
export function showAgents(agents: AgentView[], sessionAgent?: string): boolean {
  if (agents.length > 1) return true
  return !!sessionAgent && agents.length === 1 && sessionAgent !== agents[0].name
}

/**
 * AgentPicker chooses the agent of a new session: a labelled <select> of the
 * server's agents in its order (the first is the default and is what an
 * empty value means), each shown with its model. It renders nothing when
 * there is only one agent to choose.
 */
export function AgentPicker({
  t,
  agents,
  value,
  onChange,
  disabled,
}: {
  t: Dict
  agents: AgentView[]
  value: string
  onChange: (name: string) => void
  disabled?: boolean
}) {
  if (agents.length < 2) return null
  const current = agents.find((a) => a.name === value) ?? agents[0]
  return (
    <div className="agent-picker">
      <label htmlFor="agent-picker-select">{t.agentPick}</label>
      <select
        id="agent-picker-select"
        data-testid="agent-picker"
        value={current.name}
        disabled={disabled}
        onChange={(e) => onChange(e.target.value)}
      >
        {agents.map((a, i) => (
          <option key={a.name} value={a.name} data-testid={`agent-option-${a.name}`}>
            {i === 0 ? `${a.name} (${t.agentDefault}) · ${a.model}` : `${a.name} · ${a.model}`}
          </option>
        ))}
      </select>
      <span className="muted agent-tools" data-testid="agent-picker-tools">
        {t.agentTools}: {current.tools.join(', ') || '—'}
      </span>
    </div>
  )
}

/** AgentName is a session's agent as a small labelled badge. */
export function AgentName({ t, name, testId }: { t: Dict; name: string; testId: string }) {
  return (
    <span className="agent-name" data-testid={testId} data-agent={name} title={t.agentLabel}>
      <span className="visually-hidden">{t.agentLabel}: </span>
      {name}
    </span>
  )
}

/**
 * SessionHeader is the top line of an open session: its title and, when
 * the page names agents (showAgents), the agent it keeps.
 */
export function SessionHeader({ t, title, agent, named }: { t: Dict; title: string; agent?: string; named: boolean }) {
  return (
    <div className="session-header" data-testid="session-header">
      {title ? (
        <h2 className="session-header-title">{visible(title)}</h2>
      ) : (
        // The title is not known yet: a placeholder, not the session's id.
        <h2 className="session-header-title session-header-loading" aria-busy="true" data-testid="session-title-loading">
          <span aria-hidden="true">…</span>
          <span className="visually-hidden">{t.loadingTitle}</span>
        </h2>
      )}
      {named && agent ? <AgentName t={t} name={agent} testId="session-agent" /> : null}
    </div>
  )
}
