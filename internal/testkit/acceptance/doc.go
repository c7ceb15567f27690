// Package acceptance holds luban's acceptance suite for issue 3: one test per
// row of docs/design.md §A.6.4 ("验收用例") and the further cases the issue lists,
// each an HTTP conversation with a real server on loopback (internal/testkit/lubantest)
// whose raw SSE bytes the test reads itself, driven by a fake model server
// that speaks a real provider wire format (internal/testkit/fakeopenai through
// model/openai).
//
// Every test keeps its evidence (docs/design.md §A.6.4: "验证必须保留真实请求、完整原始
// SSE、服务端 tool/trace 日志和实际 ToolResult"): on failure the raw SSE of each
// stream, the HTTP exchanges, every request body the fake model received and
// the trace of each session are written under $LUBAN_ARTIFACTS (default
// artifacts/ at the repository root), one directory per test.
//
// The suite is built in one place (setup in env_test.go) from a store backend
// and a model fake, chosen by environment variables so that the same tests
// can run against other stores and other model fakes:
//
//	LUBAN_ACCEPTANCE_STORE  sqlite (default; a real SQLite file per test)
//	LUBAN_ACCEPTANCE_MODEL  openai (default; fakeopenai + model/openai)
//	                        anthropic (fakeanthropic + model/anthropic)
//
// An unknown value fails every test rather than silently running the default.
package acceptance
