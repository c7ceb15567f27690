// Package opstest checks how luban is operated (DESIGN §14) on the real
// binary: traces reach a real OTLP/HTTP receiver on loopback, /metrics of a
// serving process after a cycle, and `go install` of the module serves the
// page. Its TestMain builds cmd/luban once.
package opstest
