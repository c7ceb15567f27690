// Package replicatest runs several real `luban serve` processes on one
// PostgreSQL database (issue 7): a question asked on one replica answered on
// another, racing answers split between replicas, a replica killed with
// SIGKILL while it drives a run, an SSE client moving from one replica to
// another with Last-Event-ID, and two sweepers expiring the same question.
//
// The tests run when LUBAN_TEST_POSTGRES names a server (CI sets
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable); each test gets its
// own schema. TestMain builds cmd/luban once; a failed build fails the
// package. The model is internal/testkit/fakeopenai, reached through OPENAI_BASE_URL.
package replicatest
