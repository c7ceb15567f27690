// Package opstest checks how luban is operated (docs/design.md §14) on the real
// binary: traces reach a real OTLP/HTTP receiver on loopback, /metrics of a
// serving process after a cycle, `go install` of the module from an empty
// module cache serves the page, and the binary the Dockerfile's build stage
// makes runs as the image runs it. Its TestMain builds cmd/luban once.
package opstest
