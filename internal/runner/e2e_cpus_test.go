//go:build linux

package runner

import (
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/testenv"
)

// --cpus pins the command's tree and --runner-cpus vigil's own threads,
// apart: the command sees its mask and its parent's (vigil's) threads.
func TestE2ECPUPinning(t *testing.T) {
	testenv.RequireRoot(t)
	dir := t.TempDir()
	script := `grep -h Cpus_allowed_list /proc/self/status; grep -h Cpus_allowed_list /proc/$PPID/task/*/status | sort -u | tr '\n' ' '`
	for _, c := range []struct {
		flags         []string
		child, runner string
	}{
		{[]string{"--cpus", "1", "--runner-cpus", "0"}, "1", "0"},
		{[]string{"--runner-cpus", "0"}, "0-1", "0"},
		{[]string{"--cpus", "0"}, "0", "0-1"},
	} {
		arc := filepath.Join(dir, strings.Join(c.flags, "")+".tar.gz")
		args := append(append([]string{"record", "--archive", arc}, c.flags...), "--", "sh", "-c", script)
		r := runVigil(t, dir, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", c.flags, r.code, r.stderr)
		}
		lines := strings.SplitN(strings.TrimSpace(r.stdout), "\n", 2)
		want := []string{"Cpus_allowed_list:\t" + c.child, "Cpus_allowed_list:\t" + c.runner}
		if len(lines) != 2 || lines[0] != want[0] || strings.TrimSpace(lines[1]) != want[1] {
			t.Errorf("%v: command and vigil threads saw %q; want %q", c.flags, lines, want)
		}
	}
	if r := runVigil(t, dir, "record", "--archive", filepath.Join(dir, "x.tar.gz"), "--cpus", "9999", "--", "true"); r.code == 0 || !strings.Contains(r.stderr, "--cpus") {
		t.Errorf("--cpus 9999: exit %d, %q", r.code, r.stderr)
	}
}
