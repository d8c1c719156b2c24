//go:build linux

package cgroup

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReadMounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mountinfo")
	os.WriteFile(path, []byte("35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"+
		"36 31 0:33 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"+
		"41 31 0:38 /sub /sys/fs/cgroup/my\\040dir rw,relatime - cgroup2 cgroup2 rw\n"+
		"22 1 8:1 / / rw - ext4 /dev/vda rw\n"), 0o600)
	ms, err := ReadMounts(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[2].Point != "/sys/fs/cgroup/my dir" || ms[2].Root != "/sub" || ms[2].FSType != "cgroup2" {
		t.Fatalf("parsed %+v", ms)
	}
	if got := ms[2].Dir("/sub/a/b"); got != "/sys/fs/cgroup/my dir/a/b" {
		t.Errorf("Dir = %s", got)
	}
	if got := ms[0].Dir("/x/y"); got != "/sys/fs/cgroup/memory/x/y" {
		t.Errorf("Dir = %s", got)
	}
	if !ms[0].Has("memory") || ms[0].Has("cpu") || ms[2].Has("memory") || !ms[1].Has("cpuacct") {
		t.Errorf("Has is wrong for %+v", ms)
	}

	members := map[string]string{"": "/user.slice", "cpu,cpuacct": "/a", "memory": "/b/c"}
	for _, c := range []struct {
		controller, want string
		err              error
	}{
		{"memory", "/sys/fs/cgroup/memory/b/c", nil},
		{"cpuacct", "/sys/fs/cgroup/cpu,cpuacct/a", nil},
		{"pids", "", ErrNoV1},
	} {
		got, err := V1Dir(ms, members, c.controller)
		if got != c.want || (c.err != nil) != (err != nil) || (c.err != nil && !errors.Is(err, c.err)) {
			t.Errorf("V1Dir(%s) = %q, %v; want %q, %v", c.controller, got, err, c.want, c.err)
		}
	}
	// A membership whose hierarchy is not mounted here is an error, not
	// a guess.
	if _, err := V1Dir(ms[2:], members, "memory"); err == nil || errors.Is(err, ErrNoV1) {
		t.Errorf("unmounted hierarchy: %v", err)
	}
}

func TestReadMemberships(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cgroup")
	os.WriteFile(path, []byte("12:pids:/user.slice/x\n4:cpu,cpuacct:/\n0::/init.scope\n"), 0o600)
	m, err := ReadMemberships(path)
	if err != nil {
		t.Fatal(err)
	}
	if m["pids"] != "/user.slice/x" || m["cpu,cpuacct"] != "/" || m[""] != "/init.scope" || len(m) != 3 {
		t.Errorf("memberships %v", m)
	}
}
