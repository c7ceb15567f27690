// axe-core in the page under test: the library's own script is evaluated in
// the page (DevTools evaluation, not subject to the page's CSP), then
// axe.run checks the document (with the experimental rule that a name holds
// the visible text); serious and critical violations fail.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { expect, type Page } from '@playwright/test'

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

type Violation = { id: string; impact: string | null; help: string; nodes: { target: string[]; failureSummary?: string }[] }

/**
 * expectNoSeriousViolations runs axe on the whole page and fails with each
 * serious or critical violation (rule, help, the elements) named; `where`
 * labels the state checked.
 */
export async function expectNoSeriousViolations(page: Page, where: string): Promise<void> {
  await page.evaluate(axeSource)
  const violations = (await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (c: Document, o: object) => Promise<{ violations: unknown[] }> } }).axe
    // label-content-name-mismatch is experimental in axe (off by default): on,
    // so a control's accessible name must hold its visible text.
    return (await axe.run(document, { resultTypes: ['violations'], rules: { 'label-content-name-mismatch': { enabled: true } } })).violations
  })) as Violation[]
  const bad = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} @ ${v.nodes.map((n) => `${n.target.join(' ')} (${n.failureSummary ?? ''})`).join(' | ')}`)
  expect(bad, `axe serious/critical violations: ${where}`).toEqual([])
}
