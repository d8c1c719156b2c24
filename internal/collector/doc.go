// Package collector runs a real OpenTelemetry trace backend on loopback
// for vigil's benchmarks and tests: Jaeger v2 all-in-one (an OTLP/HTTP
// receiver and an in-memory trace store with Jaeger's query API), started
// with a generated configuration on free ports and stopped with everything
// it created. The binary is built from the version pinned in the tools
// module (see tools/README.md).
package collector
