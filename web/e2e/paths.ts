// Paths shared by the Playwright config, its global setup and the specs.
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** e2eRoot is web/e2e. */
export const e2eRoot = path.dirname(fileURLToPath(import.meta.url))
/** webRoot is web/. */
export const webRoot = path.resolve(e2eRoot, '..')
/** repoRoot is the Go module's root (go build runs there). */
export const repoRoot = path.resolve(webRoot, '..')
/** artifactDir holds everything the e2e run keeps (git-ignored). */
export const artifactDir = path.join(repoRoot, 'artifacts', 'e2e')
/** screenshotDir holds one PNG per card and receipt state, named by test. */
export const screenshotDir = path.join(artifactDir, 'screenshots')
/** everythingServer is @modelcontextprotocol/server-everything's entry (npm ci in mcpclient/testdata/everything). */
export const everythingServer = path.resolve(repoRoot, 'mcpclient/testdata/everything/node_modules/@modelcontextprotocol/server-everything/dist/index.js')
/**
 * everythingConfig is a luban config with server-everything over stdio as
 * the MCP server "everything" and an agent "mcp" that has all its tools
 * (everything__*): the setup of every spec that shows real elicitations.
 */
export const everythingConfig = `
mcp:
  servers:
    - name: everything
      command: node
      args: [${JSON.stringify(everythingServer)}, stdio]
      timeout: 60s
agents:
  - name: mcp
    tools: ["everything__*"]
`
