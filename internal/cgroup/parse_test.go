//go:build linux

package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestV2Dir: the own v2 directory comes from the one mount-table parser on
// pure v2 and hybrid hosts, escapes undone, and refuses what has none.
func TestV2Dir(t *testing.T) {
	const (
		pure   = "25 1 0:23 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw,nsdelegate\n"
		hybrid = "30 22 0:27 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n" +
			"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n" +
			"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
		escaped = "41 31 0:38 / /mnt/a\\040b rw - cgroup2 cgroup2 rw\n"
		nsRoot  = "41 31 0:38 /ns /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
		v1Only  = "34 30 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	)
	for _, c := range []struct {
		name, mountinfo, cgroup, want, err string
	}{
		{"pure v2", pure, "0::/user.slice/a.scope\n", "/sys/fs/cgroup/user.slice/a.scope", ""},
		{"hybrid", hybrid, "4:memory:/x\n0::/\n", "/sys/fs/cgroup/unified", ""},
		{"escaped mount point", escaped, "0::/s\n", "/mnt/a b/s", ""},
		{"cgroup namespace root", nsRoot, "0::/ns/s\n", "/sys/fs/cgroup/s", ""},
		{"no v2 mount", v1Only, "4:memory:/x\n0::/\n", "", "no cgroup v2 file system"},
		{"no v2 membership", pure, "4:memory:/x\n", "", "no 0:: entry"},
		{"deleted", pure, "0::/gone (deleted)\n", "", "has been deleted"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			mi, cg := filepath.Join(dir, "mountinfo"), filepath.Join(dir, "cgroup")
			os.WriteFile(mi, []byte(c.mountinfo), 0o600)
			os.WriteFile(cg, []byte(c.cgroup), 0o600)
			mounts, err := ReadMounts(mi)
			if err != nil {
				t.Fatal(err)
			}
			members, err := ReadMemberships(cg)
			if err != nil {
				t.Fatal(err)
			}
			got, err := V2Dir(mounts, members)
			if got != c.want || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
				t.Fatalf("V2Dir = %q, %v; want %q, error %q", got, err, c.want, c.err)
			}
		})
	}
}

func TestParseSessionName(t *testing.T) {
	cases := []struct {
		name string
		pid  int
		ok   bool
	}{
		{"vigil-123-abcdef0123456789", 123, true},
		{SessionName(42, "x"), 42, true},
		{"vigil-123", 0, false},
		{"vigil--x", 0, false},
		{"vigil-0-x", 0, false},
		{"vigil-12a-x", 0, false},
		{"vigil-12-", 0, false},
		{"vigil-12-a/b", 0, false},
		{"other-12-x", 0, false},
	}
	for _, c := range cases {
		pid, ok := parseSessionName(c.name)
		if pid != c.pid || ok != c.ok {
			t.Errorf("%q: got (%d,%v), want (%d,%v)", c.name, pid, ok, c.pid, c.ok)
		}
	}
}
