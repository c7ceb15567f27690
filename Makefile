# luban — the two commands of the README, and the pieces they are made of.
.PHONY: run test web web-dist web-dist-check build release test-go test-web e2e

# Serve the committed page (web/dist) with SQLite and the scripted demo model:
# only Go is needed. scripts/run.sh compiles ./cmd/luban into bin/luban with
# go build, saying what it compiles (the first build takes about 2 minutes on
# 2 cores), then runs bin/luban serve. After a change of web/src, `make web`
# (or `make web-dist`) rebuilds web/dist first.
run:
	bash scripts/run.sh

# Every test: Go (SQLite and PostgreSQL), the page's component tests, Chromium
# end-to-end, in phases (scripts/test.sh names them) with their durations.
test:
	bash scripts/test.sh

# One part of `make test`: the Go tests (with the official clients they
# drive), the page's component tests, the end-to-end tests in Chromium.
test-go:
	bash scripts/test.sh setup go

test-web:
	bash scripts/test.sh web

e2e:
	bash scripts/test.sh setup e2e

# Rebuild web/dist when web/src is newer (page development; needs Node).
web: web/dist/index.html

web/dist/index.html: web/package.json web/package-lock.json $(shell find web/src web/packages/luban-react/src web/packages/luban-react/package.json web/index.html -type f 2>/dev/null)
	cd web && npm ci --no-audit --no-fund && npm run build

# Rebuild the committed page (web/dist) from web/src: run it after any change
# of the page and commit web/dist, so that `go install …/cmd/luban@latest`
# (which runs no Node) embeds the current page. The build is deterministic.
web-dist:
	cd web && npm ci --no-audit --no-fund && npm run build

# Fail when the committed web/dist is not what web/src builds to (CI).
web-dist-check: web-dist
	@git diff --exit-code --stat -- web/dist && test -z "$$(git status --porcelain -- web/dist)" || \
	  { echo "web/dist is stale: run 'make web-dist' and commit web/dist" >&2; git status --short -- web/dist >&2; exit 1; }

build:
	go build -o luban ./cmd/luban

# A release binary as .goreleaser.yaml and the Dockerfile build it: static,
# -trimpath, stripped of its symbol table and DWARF (-s -w: about a third of
# the size, docs/operations.md), VERSION in `luban --version`.
VERSION ?= dev
release:
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$(VERSION)" -o luban ./cmd/luban
