#!/usr/bin/env bash
# `make run`: compile luban into bin/luban, saying what happens while it
# compiles (the first build takes about 2 minutes on 2 cores; later ones
# reuse Go's build cache and take seconds), then serve with the committed
# page (web/dist), SQLite and the scripted demo model. Only Go is needed.
# Arguments are passed to `luban serve`.
set -euo pipefail
cd "$(dirname "$0")/.."

start=$(date +%s)
total=$(go list -deps ./cmd/luban 2>/dev/null | wc -l)
echo "== make run: compiling ./cmd/luban into bin/luban (${total} packages; the first build takes about 2 minutes on 2 cores, later ones seconds)"
mkdir -p bin
# go build -v names each package it compiles (nothing when all are cached).
progress() {
  local n=0 line
  while IFS= read -r line; do
    case "$line" in
      *" "*|"#"*) echo "$line" ;; # a compiler message, not a package path
      *)
        n=$((n + 1))
        if [ $((n % 25)) -eq 1 ]; then
          echo "   compiling ($n so far, $(($(date +%s) - start))s): $line"
        fi
        ;;
    esac
  done
}
# The large packages (the model SDKs) and the final link are silent for a
# minute or more on 2 cores: say every 15 s that the build goes on.
( while sleep 15; do echo "   still compiling ($(($(date +%s) - start))s)"; done ) &
beat=$!
trap 'kill $beat 2>/dev/null || true' EXIT
if ! go build -v -o bin/luban ./cmd/luban 2>&1 | progress; then
  echo "== make run: the build failed (its errors are above)" >&2
  exit 1
fi
kill $beat 2>/dev/null || true
trap - EXIT
echo "== compiled in $(( $(date +%s) - start ))s; starting bin/luban serve"
exec bin/luban serve "$@"
