//go:build linux

package runner

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"vigil/internal/evidence"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// The oracle test holds vigil's record of real third-party programs
// against strace -f, run on the same processes: vigil records
// `strace -f -- PROGRAM`, strace writes what PROGRAM and its descendants
// did, and strace's own process is left out of vigil's side. For
// successful opens the two must agree on the multiset of resolved files
// (strace -y annotates the returned descriptor with its path, vigil takes
// it from the kernel's descriptor table); for failed opens, on the
// multiset of (name as given, errno); for execs, on the names executed and
// on the failed attempts with their errno.

// straceCalls are the syscalls both sides are compared on.
const straceCalls = "open,openat,openat2,creat,open_by_handle_at,execve,execveat"

// observation is one side's account, as multisets.
type observation struct {
	opened     map[string]int // resolved path of each successful open
	openFailed map[string]int // "name errno" of each failed open
	execs      map[string]int // name of each successful exec
	execFailed map[string]int // "name errno" of each failed exec
}

func newObservation() observation {
	return observation{opened: map[string]int{}, openFailed: map[string]int{}, execs: map[string]int{}, execFailed: map[string]int{}}
}

func (o observation) counts() string {
	sum := func(m map[string]int) (n int) {
		for _, v := range m {
			n += v
		}
		return n
	}
	return fmt.Sprintf("%d opens, %d failed opens, %d execs, %d failed execs", sum(o.opened), sum(o.openFailed), sum(o.execs), sum(o.execFailed))
}

// diff lists, per multiset, what one side has more of than the other.
func diff(name string, a, b map[string]int) []string {
	var out []string
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		if a[k] != b[k] {
			out = append(out, fmt.Sprintf("%s %q: vigil %d, strace %d", name, k, a[k], b[k]))
		}
	}
	return out
}

var (
	hexString  = regexp.MustCompile(`"((?:\\x[0-9a-f]{2})*)"`)
	hexAnnot   = regexp.MustCompile(`^(-?\d+)<((?:\\x[0-9a-f]{2})*)>`)
	errnoRet   = regexp.MustCompile(`^-1 (E[A-Z0-9]+) `)
	resumedHdr = regexp.MustCompile(`^<\.\.\. (\w+) resumed>`)
	retSep     = regexp.MustCompile(`\)\s+= `)
)

func unhex(s string) string {
	var b strings.Builder
	for i := 0; i+4 <= len(s); i += 4 {
		v, _ := strconv.ParseUint(s[i+2:i+4], 16, 8)
		b.WriteByte(byte(v))
	}
	return b.String()
}

var errnoByName = func() map[string]int {
	m := map[string]int{}
	for i := 1; i < 200; i++ {
		if n := unix.ErrnoName(unix.Errno(i)); n != "" {
			m[n] = i
		}
	}
	return m
}()

// parseStrace reads strace -f -y -xx output, joining calls interrupted
// by other threads (<unfinished ...> / <... resumed>).
func parseStrace(t *testing.T, path string) observation {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := newObservation()
	pending := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		pid, rest, _ := strings.Cut(sc.Text(), " ")
		rest = strings.TrimSpace(rest)
		if strings.HasSuffix(rest, "<unfinished ...>") {
			pending[pid] = strings.TrimSuffix(rest, "<unfinished ...>")
			continue
		}
		if m := resumedHdr.FindStringSubmatch(rest); m != nil {
			rest = pending[pid] + rest[len(m[0]):]
			delete(pending, pid)
		}
		call, _, ok := strings.Cut(rest, "(")
		if !ok || !strings.Contains(straceCalls, call) {
			continue
		}
		loc := retSep.FindAllStringIndex(rest, -1)
		if loc == nil {
			continue // a call that never returned (exec'd away, killed)
		}
		i := loc[len(loc)-1][0]
		ret := rest[loc[len(loc)-1][1]:]
		var name string
		// The name is the call's first string argument (after the dirfd
		// for the *at calls, whose own annotation holds no quotes).
		if m := hexString.FindStringSubmatch(rest[:i]); m != nil {
			name = unhex(m[1])
		}
		// A call a signal interrupted is run again by the kernel and
		// appears again; vigil sets its attempt aside the same way.
		if strings.HasPrefix(ret, "? ERESTART") {
			continue
		}
		failed := ""
		if m := errnoRet.FindStringSubmatch(ret); m != nil {
			failed = fmt.Sprintf("%s %d", name, -errnoByName[m[1]])
		}
		switch {
		case strings.HasPrefix(call, "exec") && failed != "":
			o.execFailed[failed]++
		case strings.HasPrefix(call, "exec"):
			o.execs[name]++
		case failed != "":
			o.openFailed[failed]++
		default:
			m := hexAnnot.FindStringSubmatch(ret)
			if m == nil {
				t.Fatalf("strace line without a resolved descriptor: %s", sc.Text())
			}
			o.opened[unhex(m[2])]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return o
}

// vigilObservation is vigil's account of every task but skip (strace).
func vigilObservation(b *evidence.Bundle, skip uint32) observation {
	o := newObservation()
	for _, e := range b.Kernel {
		if e.PID == skip || e.Open != nil && wire.Interrupted(e.Open.Ret) || e.ExecFailed != nil && wire.Interrupted(e.ExecFailed.Ret) {
			continue
		}
		switch {
		case e.Open != nil && e.Open.Ret >= 0:
			o.opened[string(e.Open.File.Path)]++
		case e.Open != nil:
			o.openFailed[fmt.Sprintf("%s %d", e.Open.Name.Requested, e.Open.Ret)]++
		case e.Exec != nil:
			o.execs[string(e.Exec.Filename)]++
		case e.ExecFailed != nil:
			o.execFailed[fmt.Sprintf("%s %d", e.ExecFailed.Name.Requested, e.ExecFailed.Ret)]++
		}
	}
	return o
}

// straceOf is the pid of strace itself: the run's first task, the one
// vigil cloned into the session.
func straceOf(t *testing.T, b *evidence.Bundle) uint32 {
	t.Helper()
	for _, e := range b.Kernel {
		if e.Fork != nil && e.Fork.Entered {
			return e.Fork.ChildPID
		}
	}
	t.Fatal("no entered fork in the archive")
	return 0
}

func TestOracleAgainstStrace(t *testing.T) {
	testenv.RequireRoot(t)
	const strace = "/usr/bin/strace"
	testenv.RequireTool(t, strace)
	testenv.RequireTool(t, "/usr/bin/musl-gcc")
	testenv.RequireTool(t, "/usr/bin/git")
	testenv.RequireTool(t, "/usr/bin/python3") // the Debian package; .ci/run installs it
	testenv.RequireTool(t, "/usr/bin/tar")
	work := t.TempDir()

	// A musl-static program: fopen, creat and a failed open go through
	// open(2) and creat(2), not openat.
	muslSrc := filepath.Join(work, "muslprog.c")
	os.WriteFile(muslSrc, []byte(`#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
int main(int argc, char **argv) {
	FILE *f = fopen(argv[1], "w"); if (!f) return 1; fputs("musl\n", f); fclose(f);
	f = fopen(argv[1], "r"); if (!f) return 1; fclose(f);
	int fd = creat(argv[2], 0644); if (fd < 0) return 1; close(fd);
	if (fopen("/nonexistent/musl", "r")) return 1;
	return 0;
}
`), 0o644)
	muslBin := filepath.Join(work, "muslprog")
	if out, err := exec.Command("musl-gcc", "-static", "-O2", "-o", muslBin, muslSrc).CombinedOutput(); err != nil {
		t.Fatalf("musl-gcc: %v\n%s", err, out)
	}
	// A tarball of 200 files, extracted under the record.
	src := filepath.Join(work, "tarsrc")
	for i := range 200 {
		p := filepath.Join(src, fmt.Sprintf("d%d", i%7), fmt.Sprintf("f%03d", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(strings.Repeat("x", i)), 0o644)
	}
	tarball := filepath.Join(work, "src.tar")
	if out, err := exec.Command("tar", "-cf", tarball, "-C", src, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	pyScript := filepath.Join(work, "threads.py")
	os.WriteFile(pyScript, []byte(`import os, sys, threading
d = sys.argv[1]
def work(i):
    for j in range(25):
        p = os.path.join(d, "t%d-%d" % (i, j))
        with open(p, "w") as f: f.write("x")
        with open(p) as f: f.read()
        try: open(p + ".missing")
        except FileNotFoundError: pass
ts = [threading.Thread(target=work, args=(i,)) for i in range(8)]
[t.start() for t in ts]; [t.join() for t in ts]
`), 0o644)

	programs := []struct {
		name string
		cmd  string // run by sh -c in a fresh directory
	}{
		{"git", `git init -q repo && cd repo && echo hello > a.txt && mkdir sub && echo x > sub/b.txt && git add . && git -c user.name=v -c user.email=v@v commit -q -m init && git log --oneline > /dev/null`},
		{"tar", `mkdir out && tar -xf ` + tarball + ` -C out`},
		{"python-threads", `mkdir py && /usr/bin/python3 ` + pyScript + ` py`},
		{"pipeline", `cat /etc/passwd | grep -v nologin | sort | uniq -c | wc -l > count.txt; ls -la / | head -3 > /dev/null; env vigil-no-such-program 2>/dev/null || true`},
		{"musl-static", muslBin + ` musl-out.txt musl-creat.txt`},
	}
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			dir := t.TempDir()
			trace := filepath.Join(t.TempDir(), "strace.out")
			arc := filepath.Join(t.TempDir(), "a.tar.gz")
			r := runVigil(t, dir, "record", "-q", "--run-id", "oracle_"+strings.ReplaceAll(p.name, "-", "_"), "--archive", arc, "--",
				strace, "-f", "-qq", "-y", "-xx", "-s", "8192", "-e", "trace="+straceCalls, "-e", "signal=none", "-o", trace,
				"--", "/bin/sh", "-c", p.cmd)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			b := verifyAndRead(t, arc)
			assertHealthy(t, b.Health)
			want := parseStrace(t, trace)
			got := vigilObservation(b, straceOf(t, b))
			var diffs []string
			diffs = append(diffs, diff("opened", got.opened, want.opened)...)
			diffs = append(diffs, diff("open failed", got.openFailed, want.openFailed)...)
			diffs = append(diffs, diff("exec", got.execs, want.execs)...)
			diffs = append(diffs, diff("exec failed", got.execFailed, want.execFailed)...)
			t.Logf("%s: vigil %s; strace %s", p.name, got.counts(), want.counts())
			if len(diffs) > 0 {
				t.Fatalf("vigil and strace -f disagree on %s:\n%s", p.name, strings.Join(diffs, "\n"))
			}
			if p.name == "pipeline" && len(want.execFailed) == 0 {
				t.Fatalf("the pipeline's failed execs were not seen by strace: %s", want.counts())
			}
			if len(want.opened) == 0 || len(want.execs) == 0 {
				t.Fatalf("strace saw nothing: %s", want.counts())
			}
		})
	}
}
