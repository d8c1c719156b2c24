// Package policy judges a run against a small declarative policy: allow
// and deny rules per operation (read, write, exec, connect, ...) on path
// globs and network endpoints, optionally scoped to a tool call by name.
//
// Load parses and validates a policy (YAML or JSON, schema "policy");
// Check evaluates a bundle's actions (evidence.Actions) in sequence order
// and returns every violation with the events, processes and tool calls
// behind it. A record that is not complete for what the policy asks can
// never pass: Check then says no violation was seen in an incomplete
// record. Renderers (text, JSON, SARIF 2.1.0) are one file each.
package policy
