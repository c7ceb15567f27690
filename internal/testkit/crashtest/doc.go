// Package crashtest proves luban's restart and crash durability (issue 5,
// docs/design.md §4, §A.4/§A.6.2/§A.6.4 "服务重启: 精确续跑 vs 不可续跑") with real
// processes. Its tests build cmd/luban once (TestMain), run it on a SQLite
// file in a temporary directory against an internal/testkit/fakeopenai server owned
// by the test (so model requests are recorded across restarts), and stop it
// with kill -9 at exact points reached through LUBAN_FAULT=<point>[:<n>]
// (the process SIGKILLs itself there), with SIGTERM, or with a kill -9 sent
// by the test. After each restart they check, through the public HTTP/SSE
// API only, that the pending request is the same one, that no answer was
// lost, that no tool call has two ToolResults, that the run reaches its end,
// that the audit and the event log hold every entry once, and that the model
// request sent after the restart is byte-for-byte the one a process that
// never stopped sends.
//
// The package has no non-test code besides this comment; docs/durability.md
// describes what is persisted when and what each crash point does.
package crashtest
