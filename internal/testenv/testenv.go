// Package testenv decides whether privileged tests may run. On a developer
// machine without root they skip; where VIGIL_REQUIRE_PRIVILEGED=1 is set
// (CI sets it) a missing privilege is a test failure, never a silent skip.
package testenv

import (
	"os"
	"testing"
)

// Required reports whether privileged tests must run.
func Required() bool { return os.Getenv("VIGIL_REQUIRE_PRIVILEGED") == "1" }

// RequireRoot skips (or fails, when Required) unless running as root with
// BPF and BTF available.
func RequireRoot(t testing.TB) {
	t.Helper()
	reason := ""
	switch {
	case os.Geteuid() != 0:
		reason = "not running as root"
	default:
		if _, err := os.Stat("/sys/kernel/btf/vmlinux"); err != nil {
			reason = "kernel BTF (/sys/kernel/btf/vmlinux) not available"
		}
	}
	if reason == "" {
		return
	}
	if Required() {
		t.Fatalf("privileged test cannot run: %s (VIGIL_REQUIRE_PRIVILEGED=1)", reason)
	}
	t.Skipf("skipping privileged test: %s", reason)
}

// RequireTool skips (or fails, when Required) unless path exists.
func RequireTool(t testing.TB, path string) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return
	}
	if Required() {
		t.Fatalf("required tool %s is missing (VIGIL_REQUIRE_PRIVILEGED=1)", path)
	}
	t.Skipf("skipping: %s not installed", path)
}
