# luban — the two commands of the README, and the pieces they are made of.
.PHONY: run test web build test-go test-web e2e

# Build the page (if needed) and serve it with SQLite and the scripted demo model.
run: web
	go run ./cmd/luban serve

# Every test: Go (SQLite and PostgreSQL), the page's component tests, Chromium end-to-end.
test:
	bash scripts/test.sh

web: web/dist/index.html

web/dist/index.html: web/package.json web/package-lock.json $(shell find web/src web/index.html -type f 2>/dev/null)
	cd web && npm ci --no-audit --no-fund && npm run build

build: web
	go build -o luban ./cmd/luban
