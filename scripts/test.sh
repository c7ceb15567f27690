#!/usr/bin/env bash
# The test command of the README (`make test`), in phases that also run
# alone: `scripts/test.sh [PHASE...]` (no PHASE: all of them, in order).
#
#   setup  install what the tests need on a fresh Debian machine (chromium,
#          fonts, the PostgreSQL client) and start PostgreSQL if it is down
#   web    the page: npm ci, build, component tests (vitest), web/dist check
#   image  the container image, when a docker engine runs
#   go     the npm packages the Go tests drive (official clients), go vet,
#          go test (SQLite and PostgreSQL), fuzzing, the acceptance suite
#          again, go test -race                          (make test-go)
#   e2e    end-to-end in headless Chromium (Playwright)   (make e2e)
#
# Each phase prints "== [phase] …" lines as it goes, and the run ends with
# every phase's duration (also when one fails).
set -euo pipefail
cd "$(dirname "$0")/.."

phase_setup() {
  echo "== no tracked file over 1 MiB unless scripts/large-files.allow names it"
  bash scripts/check-large-files.sh

  need_apt=()
  command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
  # Fonts only make the screenshots readable (Chinese, emoji); tests pass without them.
  [ -d /usr/share/fonts/truetype/wqy ] || need_apt+=(fonts-wqy-zenhei)
  [ -f /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf ] || need_apt+=(fonts-noto-color-emoji)
  command -v pg_isready >/dev/null 2>&1 || need_apt+=(postgresql-client)
  if [ ${#need_apt[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ]; then
      echo "== installing ${need_apt[*]}"
      apt-get -o DPkg::Lock::Timeout=600 update -qq && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${need_apt[@]}" >/dev/null
    else
      echo "missing: ${need_apt[*]} (install them with apt-get as root)" >&2
      exit 1
    fi
  fi

  if ! pg_isready -q -h 127.0.0.1 -p 5432; then
    echo "== starting PostgreSQL"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  fi
}

# The PostgreSQL URL every Go test phase uses (the local one setup starts, unless set).
export LUBAN_TEST_POSTGRES="${LUBAN_TEST_POSTGRES:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}"

phase_web() {
  echo "== page: npm ci, build, component tests"
  (cd web && npm ci --no-audit --no-fund && npm run build && npm test)

  echo "== the committed page (web/dist) is what web/src builds to"
  # go install …/cmd/luban@latest embeds web/dist as committed (docs/design.md §14).
  if ! git diff --exit-code --stat -- web/dist || [ -n "$(git status --porcelain -- web/dist)" ]; then
    git status --short -- web/dist >&2
    echo "web/dist is stale: run 'make web-dist' and commit web/dist" >&2
    exit 1
  fi
}

phase_image() {
  # The Dockerfile's build stage, run without docker (static binary, the
  # image's user, ENV, HEALTHCHECK), is internal/testkit/opstest's
  # TestDockerfileBinaryRunsAsTheImageDoes in go test below. The image itself
  # is built when an engine runs and can get the base images.
  if ! command -v docker >/dev/null 2>&1; then
    echo "== container image: skipped (no docker command)"
  elif ! docker_err=$(docker version --format '{{.Server.Version}}' 2>&1 >/dev/null); then
    echo "== container image: skipped (no docker engine: $(printf '%s' "$docker_err" | head -1))"
  else
    missing=""
    for image in $(awk 'toupper($1) == "FROM" { print $2 }' Dockerfile); do
      docker image inspect "$image" >/dev/null 2>&1 && continue
      if ! pull_err=$(timeout 120 docker pull -q "$image" 2>&1 >/dev/null); then
        missing="$image ($(printf '%s' "$pull_err" | head -1))"
        break
      fi
    done
    if [ -n "$missing" ]; then
      echo "== container image: skipped (the docker engine runs but cannot pull the base image $missing)"
    else
      echo "== container image (Dockerfile)"
      docker build -q -t luban:ci .
    fi
  fi
}

phase_go() {
  echo "== AG-UI client packages (internal/testkit/aguitest: @ag-ui/core schemas, @ag-ui/client HttpAgent)"
  (cd internal/testkit/aguitest && npm ci --no-audit --no-fund)
  (cd examples/agui && npm ci --no-audit --no-fund)

  echo "== CopilotKit (internal/testkit/copilotkittest: @copilotkit/runtime 1.75.0, @copilotkit/core 1.74.0, @ag-ui/client 0.0.59)"
  # One npm ci (about 290 MB), kept in the harness directory: skipped when
  # node_modules was installed from the lock file as it is now.
  ck=internal/testkit/copilotkittest
  if ! cmp -s "$ck/package-lock.json" "$ck/node_modules/.luban-installed-lock" 2>/dev/null; then
    (cd "$ck" && COPILOTKIT_TELEMETRY_DISABLED=true SCARF_ANALYTICS=false npm ci --no-audit --no-fund \
      && cp package-lock.json node_modules/.luban-installed-lock)
  fi

  echo "== the official MCP TypeScript SDK client (internal/testkit/mcptest drives luban's /mcp with it)"
  (cd internal/testkit/mcptest && npm ci --no-audit --no-fund)

  echo "== the official MCP conformance suite (internal/testkit/mcpconformance runs its client scenarios against luban's MCP client)"
  (cd internal/testkit/mcpconformance && npm ci --no-audit --no-fund)

  echo "== the official Standard Webhooks verifier for people/webhook_test.go"
  (cd people/testdata/verify && npm ci --no-audit --no-fund)
  (cd examples/slack-relay && npm ci --no-audit --no-fund)   # the Slack recipe of docs/notifications.md, run by people/relay_test.go

  echo "== the official MCP reference server (server-everything) for mcpclient and cmd/luban tests"
  (cd mcpclient/testdata/everything && npm ci --no-audit --no-fund)

  echo "== go vet"
  go vet ./...
  go vet -tags lubantest ./agent/ ./cmd/luban/ ./internal/testkit/crashtest/

  echo "== the Dockerfile's build configuration (CGO_ENABLED=0 -trimpath), compiled once before the tests use it"
  # internal/testkit/opstest builds the binary as the Dockerfile does; on a cold build
  # cache that configuration recompiles the std library and every dependency,
  # which belongs to CI's time, not to one test binary's timeout.
  CGO_ENABLED=0 go build -trimpath -o /dev/null ./cmd/luban

  echo "== go test"
  # Evidence of every acceptance row (raw SSE, model request bodies, traces,
  # ToolResults) is kept under artifacts/ even when the test passes (docs/design.md §7).
  LUBAN_EVIDENCE=1 go test -count=1 -timeout 30m ./...
  # The in-process fault injection test needs the test hooks (agent.InjectFault),
  # which exist only with the lubantest tag; the process tests build their
  # binary with that tag themselves.
  go test -count=1 -timeout 5m -tags lubantest -run TestAnswerWhileDriverFinishes ./internal/testkit/crashtest/

  echo "== fuzzing: every fuzz target for a few seconds (scripts/fuzz.sh)"
  bash scripts/fuzz.sh

  echo "== the acceptance suite again: on PostgreSQL, and with the Anthropic fake"
  LUBAN_ACCEPTANCE_STORE=postgres go test -count=1 -timeout 10m ./internal/testkit/acceptance/
  LUBAN_ACCEPTANCE_MODEL=anthropic go test -count=1 -timeout 10m ./internal/testkit/acceptance/

  echo "== go test -race (the run, the store and the API)"
  go test -count=1 -race -timeout 20m ./agent/... ./store/... ./server/... ./internal/testkit/acceptance/...
}

phase_e2e() {
  echo "== end-to-end in Chromium"
  [ -d web/node_modules ] || (cd web && npm ci --no-audit --no-fund)
  # web/e2e/mcp-oauth.spec.ts runs the conformance suite's OAuth scenario server.
  [ -d internal/testkit/mcpconformance/node_modules ] || (cd internal/testkit/mcpconformance && npm ci --no-audit --no-fund)
  (cd web && npm run e2e)
}

all=(setup web image go e2e)
phases=("$@")
[ ${#phases[@]} -gt 0 ] || phases=("${all[@]}")
for p in "${phases[@]}"; do
  case " ${all[*]} " in *" $p "*) ;; *) echo "unknown phase $p (phases: ${all[*]})" >&2; exit 2 ;; esac
done

durations=()
current=""
current_start=0
fmt() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
summary() {
  local rc=$?
  if [ -n "$current" ]; then
    durations+=("$current $(fmt $(($(date +%s) - current_start))) (failed)")
  fi
  echo "== phases:"
  for d in "${durations[@]}"; do echo "   $d"; done
  echo "   total $(fmt $(($(date +%s) - begin)))"
  exit $rc
}
begin=$(date +%s)
trap summary EXIT
for p in "${phases[@]}"; do
  current=$p
  current_start=$(date +%s)
  echo "== [$p] started $(date +%H:%M:%S)"
  "phase_$p"
  durations+=("$p $(fmt $(($(date +%s) - current_start)))")
  current=""
done
