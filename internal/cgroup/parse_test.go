//go:build linux

package cgroup

import "testing"

func TestParseV2Mount(t *testing.T) {
	hybrid := "tmpfs /sys/fs/cgroup tmpfs rw 0 0\ncgroup /sys/fs/cgroup/memory cgroup rw,memory 0 0\ncgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n"
	if got, err := parseV2Mount([]byte(hybrid)); err != nil || got != "/sys/fs/cgroup/unified" {
		t.Fatalf("hybrid: got %q, %v", got, err)
	}
	if got, _ := parseV2Mount([]byte(`cgroup2 /mnt/a\040b cgroup2 rw 0 0`)); got != "/mnt/a b" {
		t.Fatalf("escaped mount point: got %q", got)
	}
	if _, err := parseV2Mount([]byte("cgroup /sys/fs/cgroup/memory cgroup rw 0 0\n")); err != ErrNoV2 {
		t.Fatalf("v1 only: want ErrNoV2, got %v", err)
	}
}

func TestParseSelfPath(t *testing.T) {
	if got, err := parseSelfPath([]byte("4:memory:/x\n0::/user.slice/a.scope\n")); err != nil || got != "/user.slice/a.scope" {
		t.Fatalf("got %q, %v", got, err)
	}
	if _, err := parseSelfPath([]byte("4:memory:/x\n")); err == nil {
		t.Fatal("no 0:: line: want error")
	}
	if _, err := parseSelfPath([]byte("0::/gone (deleted)\n")); err == nil {
		t.Fatal("deleted cgroup: want error")
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
