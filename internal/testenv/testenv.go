// Package testenv decides whether privileged tests may run. On a developer
// machine without root they skip; where VIGIL_REQUIRE_PRIVILEGED=1 is set
// (CI sets it) a missing privilege is a test failure, never a silent skip.
package testenv

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// ModuleFile returns the local path of file inside Go module mod at
// version, downloading the module through the Go module proxy (which
// checks it against the checksum database) when it is not cached. Tests
// use it for reference data published in a module, such as a standard's
// JSON Schema. Skips (or fails, when Required) when it cannot be fetched.
func ModuleFile(t testing.TB, mod, version, file string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", mod+"@"+version)
	cmd.Dir = t.TempDir() // outside any module: go.mod stays as it is
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if err == nil {
		err = json.Unmarshal(out, &info)
	}
	if err == nil && info.Error != "" {
		err = errors.New(info.Error)
	}
	if err != nil {
		if Required() {
			t.Fatalf("module %s@%s: %v (VIGIL_REQUIRE_PRIVILEGED=1)", mod, version, err)
		}
		t.Skipf("skipping: module %s@%s not available: %v", mod, version, err)
	}
	return filepath.Join(info.Dir, file)
}

// Chromium is the headless browser the HTML tests drive.
const Chromium = "/usr/bin/chromium"

// RunChromium runs headless Chromium with args (after RequireTool) in a
// throwaway profile and returns its stdout and stderr.
func RunChromium(t testing.TB, args ...string) (string, string) {
	t.Helper()
	RequireTool(t, Chromium)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, Chromium, append(base, args...)...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String(), stderr.String()
}
