//go:build linux

package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/wire"
)

func TestCountStrace(t *testing.T) {
	// strace -f -o output (the task id padded to five columns): an exec,
	// a loader open, a failed connect, file
	// creations (one split by another task into unfinished/resumed), the
	// O_PATH directory open, a signal and exits.
	out := `101 execve("/usr/bin/tar", ["tar", "-xf", "a.tar", "-C", "x"], 0x7ffd /* 3 vars */) = 0
101   openat(AT_FDCWD, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC) = 3
101 connect(4, {sa_family=AF_UNIX, sun_path="/var/run/nscd/socket"}, 110) = -1 ENOENT (No such file or directory)
7928  openat(4, "./d0000/vpf0000000.dat", O_WRONLY|O_CREAT|O_EXCL|O_NOCTTY|O_NONBLOCK|O_CLOEXEC, 0600) = 5
101 openat(4, "d0000/vpf0000001.dat", O_WRONLY|O_CREAT|O_EXCL, 0600 <unfinished ...>
102 openat(AT_FDCWD, "/etc/passwd", O_RDONLY) = 3
101 <... openat resumed>) = 5
101 open("/tmp/x/d0001/vpf0001000.dat", O_WRONLY|O_CREAT, 0600) = 6
101 openat(4, "./d0000", O_RDONLY|O_NOFOLLOW|O_CLOEXEC|O_PATH) = 5
101 openat(4, "./d0000/vpf0000002.dat.bak", O_RDONLY) = -1 ENOENT (No such file or directory)
101 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED} ---
102 +++ exited with 0 +++
101 +++ exited with 0 +++
`
	c, err := countStrace(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	want := counts{FileOpens: 3, SetEvents: 9, Lost: -1}
	if c != want {
		t.Fatalf("countStrace = %+v, want %+v", c, want)
	}
}

func TestCountBpftrace(t *testing.T) {
	out := `Attaching 8 probes...
execve 7 /usr/bin/tar
open 7 3 /etc/ld.so.cache
connect 7 4
open 7 5 ./d0000/vpf0000000.dat
open 7 5 ./d0000/vpf0000001.dat
open 7 -17 ./d0000/vpf0000002.dat
Lost 12 events
open 7 5 ./d0000
open 7 3 /path with spaces/d0000/vpf0000003.dat
Lost 3 events
`
	c, err := countBpftrace(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	want := counts{FileOpens: 4, SetEvents: 8, Lost: 15}
	if c != want {
		t.Fatalf("countBpftrace = %+v, want %+v", c, want)
	}
}

func TestCountAudit(t *testing.T) {
	gs := "\x1d"
	out := strings.Join([]string{
		// The rule's own CONFIG_CHANGE carries the key but is no event.
		`type=CONFIG_CHANGE msg=audit(1796126434.111:3122): auid=4294967295 ses=4294967295 op=add_rule key="vigil-peers" list=4 res=1` + gs + `AUID="unset"`,
		`type=SYSCALL msg=audit(1796126434.247:3127): arch=c000003e syscall=59 success=yes exit=0 items=2 comm="tar" key="vigil-peers"` + gs + `ARCH=x86_64 SYSCALL=execve`,
		`type=PATH msg=audit(1796126434.247:3127): item=0 name="/usr/bin/tar" inode=1 nametype=NORMAL`,
		`type=EOE msg=audit(1796126434.247:3127): `,
		`type=SYSCALL msg=audit(1796126434.275:3195): arch=c000003e syscall=257 success=yes exit=5 items=2 comm="tar" key="vigil-peers"` + gs + `ARCH=x86_64 SYSCALL=openat`,
		`type=CWD msg=audit(1796126434.275:3195): cwd="/tmp"`,
		`type=PATH msg=audit(1796126434.275:3195): item=0 name="./d0000/" inode=2 nametype=PARENT`,
		`type=PATH msg=audit(1796126434.275:3195): item=1 name="./d0000/vpf0000007.dat" inode=3 nametype=CREATE` + gs + `OUID="root"`,
		// A name with a space is hex-encoded.
		`type=SYSCALL msg=audit(1796126434.276:3196): arch=c000003e syscall=257 success=yes exit=5 items=1 key="vigil-peers"`,
		`type=PATH msg=audit(1796126434.276:3196): item=0 name=2F6120622F64303030302F767066303030303030382E646174 inode=4 nametype=CREATE`,
		// Another key's event naming an archive file is not this run's.
		`type=SYSCALL msg=audit(1796126434.277:3197): arch=c000003e syscall=257 success=yes exit=5 items=1 key="other"`,
		`type=PATH msg=audit(1796126434.277:3197): item=0 name="d0000/vpf0000009.dat" nametype=CREATE`,
		`type=USER msg=audit(1796126434.300:3198): pid=9 uid=0 msg='text=vigil-peers-end-3-done exe="/usr/sbin/auditctl"'`,
	}, "\n") + "\n"
	c, err := countAudit(strings.NewReader(out), "vigil-peers")
	if err != nil {
		t.Fatal(err)
	}
	// The hex name decodes to "/a b/d0000/vpf0000008.dat".
	want := counts{FileOpens: 2, SetEvents: 3, Lost: -1}
	if c != want {
		t.Fatalf("countAudit = %+v, want %+v", c, want)
	}
	if v, ok := auditField([]byte(` name=2F6120622F`), "name"); !ok || v != "/a b/" {
		t.Fatalf("hex name decoded to %q, %v", v, ok)
	}
}

func TestCountVigil(t *testing.T) {
	file := func(p string) *wire.ResolvedPath { return &wire.ResolvedPath{Path: wire.Bytes(p)} }
	b := &evidence.Bundle{Kernel: []wire.Kernel{
		{Kind: wire.KindExec},
		{Kind: wire.KindFork},
		{Kind: wire.KindOpen, Open: &wire.Open{File: file("/etc/ld.so.cache"), Name: wire.Name{Requested: "/etc/ld.so.cache"}}},
		{Kind: wire.KindOpen, Open: &wire.Open{File: file("/tmp/w/x/3/d0000/vpf0000000.dat"), Name: wire.Name{Requested: "./d0000/vpf0000000.dat"}}},
		// A failed open: only the name passed.
		{Kind: wire.KindOpen, Open: &wire.Open{Name: wire.Name{Requested: "./d0000/vpf0000001.dat"}, Ret: -17}},
		// Resolved path wins over the name.
		{Kind: wire.KindOpen, Open: &wire.Open{File: file("/elsewhere"), Name: wire.Name{Requested: "d0000/vpf0000002.dat"}}},
		{Kind: wire.KindMkdir},
		{Kind: wire.KindChown},
		{Kind: wire.KindConnect},
		{Kind: wire.KindExit},
	}}
	b.Health.RingbufDrops.Total = 4
	c := countVigil(b)
	want := counts{FileOpens: 2, SetEvents: 6, Lost: 4}
	if c != want {
		t.Fatalf("countVigil = %+v, want %+v", c, want)
	}
}

func TestParseStraceSummary(t *testing.T) {
	out := `     calls    errors syscall
 --------- --------- ----------------
      1011           openat
         1           execve
         4         4 connect
 --------- --------- ----------------
      1016         4 total
`
	p, err := parseStraceSummary(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if p.Calls["openat"] != 1011 || p.Calls["execve"] != 1 || p.Calls["connect"] != 4 || p.Errors["connect"] != 4 || p.Errors["openat"] != 0 || len(p.Calls) != 3 {
		t.Fatalf("parsed %+v", p)
	}
	if _, err := parseStraceSummary(strings.NewReader("strace: exec: No such file\n")); err == nil {
		t.Fatal("output without rows parsed without error")
	}
}

func TestCheckProfile(t *testing.T) {
	row := func(n, openat int) profileRow {
		return profileRow{N: n, straceProfile: straceProfile{Calls: map[string]int{"openat": openat, "execve": 1}}}
	}
	ok := checkProfile([]profileRow{row(0, 7), row(1000, 7+1000+1+1), row(2500, 7+2500+3+1)}, 1000)
	if !strings.HasPrefix(ok, "ok:") {
		t.Fatalf("consistent profile judged %q", ok)
	}
	bad := checkProfile([]profileRow{row(0, 7), row(1000, 7+1000)}, 1000)
	if !strings.HasPrefix(bad, "MISMATCH") || !strings.Contains(bad, "N=1000: openat 1007 calls, expected 1009") {
		t.Fatalf("inconsistent profile judged %q", bad)
	}
}

func TestWriteArchive(t *testing.T) {
	dir := t.TempDir()
	a, err := writeArchive(filepath.Join(dir, "a.tar"), 2500, 1000, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, err := writeArchive(filepath.Join(dir, "b.tar"), 2500, 1000, 7)
	if err != nil {
		t.Fatal(err)
	}
	c, err := writeArchive(filepath.Join(dir, "c.tar"), 2500, 1000, 8)
	if err != nil {
		t.Fatal(err)
	}
	if a.SHA256 != b.SHA256 || a.SHA256 == c.SHA256 {
		t.Fatalf("same seed %s %s, other seed %s: want equal, then different", a.SHA256, b.SHA256, c.SHA256)
	}
	data, err := os.ReadFile(a.Path)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(bytes.NewReader(data))
	files, dirs := 0, 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			dirs++
		case tar.TypeReg:
			if !extractedFile.MatchString(h.Name) || h.Size < 1 || h.Size > 512 {
				t.Fatalf("entry %q of %d bytes", h.Name, h.Size)
			}
			files++
		}
	}
	if files != 2500 || dirs != 3 || a.Dirs != 3 {
		t.Fatalf("%d files in %d dirs (info %d), want 2500 in 3", files, dirs, a.Dirs)
	}
}
