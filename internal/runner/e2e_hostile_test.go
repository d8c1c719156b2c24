//go:build linux

package runner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

// Workloads that try to drown, blind or fool the recorder. Each is run
// under vigil record; the archive must verify, and what it says must be
// what the kernel did.
func TestE2EHostileWorkloads(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "/usr/bin/python3")
	dir := t.TempDir()

	// A path longer than PATH_MAX (4096), reached one component at a
	// time, as no single syscall could name it.
	deep := dir
	var comps []string
	for i := 0; len(deep) < 5000; i++ {
		c := strings.Repeat(string(rune('a'+i%26)), 200)
		comps = append(comps, c)
		deep += "/" + c
	}

	for _, c := range []struct {
		name  string
		argv  []string
		flags []string
		code  int
		check func(t *testing.T, b *evidence.Bundle, stdout string)
	}{
		{"floods stdout", []string{"sh", "-c", "head -c 20000000 /dev/zero; echo end"}, nil, 0,
			func(t *testing.T, b *evidence.Bundle, stdout string) {
				if len(stdout) != 20000004 || !strings.HasSuffix(stdout, "end\n") {
					t.Errorf("stdout %d bytes, want the workload's 20000004", len(stdout))
				}
			}},
		{"closes stdout and stderr", []string{"sh", "-c", "exec >&- 2>&-; read x < /etc/hostname; echo lost; exit 4"}, nil, 4,
			func(t *testing.T, b *evidence.Bundle, stdout string) {
				if !opened(b, "sh", "/etc/hostname") || stdout != "" {
					t.Errorf("the open of /etc/hostname by sh is missing, or stdout %q", stdout)
				}
			}},
		{"leaves a straggler that ignores SIGTERM and SIGINT", []string{"sh", "-c", `(trap "" TERM INT HUP; exec sleep 30) & exit 0`},
			[]string{"--grace", "100ms"}, 0,
			func(t *testing.T, b *evidence.Bundle, stdout string) {
				h := b.Health.CgroupCorrelation
				if h.StragglersKilled != 1 || h.Status == wire.CorrelationClean {
					t.Errorf("cgroup_correlation %+v; want the straggler killed and counted", h)
				}
			}},
		{"renames itself to look like sshd", []string{"python3", "-c",
			"open('/proc/self/comm','w').write('sshd'); open('/etc/hostname').read()"}, nil, 0,
			func(t *testing.T, b *evidence.Bundle, stdout string) {
				// The open is by comm "sshd", but its pid's program is the
				// one the kernel ran: python, not sshd.
				var pid uint32
				for _, e := range b.Kernel {
					if e.Open != nil && string(e.Open.Path()) == "/etc/hostname" && string(e.Comm) == "sshd" {
						pid = e.PID
					}
				}
				if pid == 0 {
					t.Fatal("no open of /etc/hostname under the spoofed comm")
				}
				prog := programOf(b, pid)
				if !strings.Contains(prog, "python") {
					t.Errorf("pid %d's program is %q, want python", pid, prog)
				}
			}},
		{"passes a false argv[0]", []string{"bash", "-c", "exec -a /usr/sbin/sshd cat /etc/hostname"}, nil, 0,
			func(t *testing.T, b *evidence.Bundle, stdout string) {
				found := false
				for _, e := range b.Kernel {
					if e.Exec != nil && len(e.Exec.Argv) > 0 && string(e.Exec.Argv[0]) == "/usr/sbin/sshd" {
						found = true
						if p := string(e.Exec.File.Path); !strings.HasSuffix(p, "/cat") {
							t.Errorf("exec with argv[0] sshd records program %q, want cat", p)
						}
					}
				}
				if !found {
					t.Error("no exec with the false argv[0]")
				}
			}},
		{"huge argv and environment", hugeArgv(), nil, 0,
			func(t *testing.T, b *evidence.Bundle, stdout string) {
				for _, e := range b.Kernel {
					if e.Exec != nil && strings.HasSuffix(string(e.Exec.File.Path), "/true") {
						if e.Exec.Argc != 20001 || !e.Exec.ArgvTruncated || !slices.Equal(e.Incomplete, []string{wire.IncompleteArgv}) {
							t.Errorf("exec of true: argc %d, truncated %v, incomplete %q; want 20001, true, [argv_truncated]", e.Exec.Argc, e.Exec.ArgvTruncated, e.Incomplete)
						}
						if b.Health.IncompleteParts[wire.IncompleteArgv] == 0 {
							t.Errorf("health incomplete_parts %v counts no cut argv", b.Health.IncompleteParts)
						}
						return
					}
				}
				t.Error("no exec of true")
			}},
		{"passes pointers to nothing", []string{"python3", "-c", badPointers}, nil, 0,
			func(t *testing.T, b *evidence.Bundle, stdout string) {
				// The kernel refuses both calls (EFAULT); the capture
				// cannot read what they point to either, and says so in
				// each event and in health.
				const efault = -14
				var open, connect bool
				for _, e := range b.Kernel {
					switch {
					case e.Open != nil && e.Open.Ret == efault:
						open = true
						if !e.Open.Name.Missing || e.Open.Name.Dir != nil || !slices.Equal(e.Incomplete, []string{wire.IncompleteReadFailed}) {
							t.Errorf("open of a bad pointer: name %+v, incomplete %q", e.Open.Name, e.Incomplete)
						}
					case e.Kind == wire.KindConnect && e.Net.Ret == efault:
						connect = true
						if !slices.Equal(e.Incomplete, []string{wire.IncompleteReadFailed}) {
							t.Errorf("connect to a bad pointer: %+v, incomplete %q", *e.Net, e.Incomplete)
						}
					}
				}
				if !open || !connect {
					t.Fatalf("events of the refused calls missing: open %v, connect %v", open, connect)
				}
				// The name it could not read has no path: the working
				// directory it would have been relative to is no failed
				// open.
				surface, err := b.WholeSurface()
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range surface.OpenFailures {
					if string(p) == dir || string(p) == dir+"/" {
						t.Errorf("open_failures lists %s, the directory an unreadable name would be relative to", p)
					}
				}
				h := b.Health
				if h.KernelLayer.Status != wire.LayerPartial || h.IncompleteParts[wire.IncompleteReadFailed] < 2 {
					t.Errorf("kernel_layer %s, read faults %d %v; want partial, at least 2 read_failed", h.KernelLayer.Status, h.ReadFaults, h.IncompleteParts)
				}
			}},
		{"opens a file past PATH_MAX", []string{"python3", "-c",
			"import os, sys\nfor c in sys.argv[1:]:\n    os.mkdir(c); os.chdir(c)\nopen('f', 'w').write('x')"}, nil, 0,
			func(t *testing.T, b *evidence.Bundle, stdout string) {
				// Kept in part, said so, and the layer is not complete.
				if b.Health.KernelLayer.Status != wire.LayerPartial || b.Health.ReadFaults == 0 {
					t.Errorf("kernel_layer %s with %d read faults; want partial", b.Health.KernelLayer.Status, b.Health.ReadFaults)
				}
				for _, e := range b.Kernel {
					if e.Open != nil && e.Open.File != nil && strings.HasSuffix(string(e.Open.File.Path), comps[len(comps)-1]+"/f") {
						if !e.Open.File.Truncated || !slices.Contains(e.Incomplete, wire.IncompletePath) {
							t.Errorf("a %d-byte path recorded as %d bytes, truncated %v, incomplete %q", len(deep)+2, len(e.Open.File.Path), e.Open.File.Truncated, e.Incomplete)
						}
						return
					}
				}
				t.Error("no open of the deep file")
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			arc := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".tar.gz")
			argv := c.argv
			if strings.Contains(c.name, "PATH_MAX") {
				argv = append(append([]string{}, argv...), comps...)
			}
			args := append(append([]string{"record", "--archive", arc}, c.flags...), "--")
			cmd := exec.Command(testenv.Vigil(t), append(args, argv...)...)
			cmd.Dir = dir
			if strings.HasPrefix(c.name, "huge") {
				// Each string at most MAX_ARG_STRLEN (128 KiB).
				cmd.Env = os.Environ()
				for i := range 4 {
					cmd.Env = append(cmd.Env, fmt.Sprintf("HUGE%d=%s", i, strings.Repeat("v", 100000)))
				}
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != c.code {
				t.Fatalf("exit %d, want %d: %s", code, c.code, stderr.String())
			}
			c.check(t, verifyAndRead(t, arc), stdout.String())
		})
	}
}

// badPointers calls openat and connect with an address nothing maps.
const badPointers = `import ctypes, os, socket
libc = ctypes.CDLL(None, use_errno=True)
openat, connect = (56, 203) if os.uname().machine == "aarch64" else (257, 42)
bad = ctypes.c_void_p(8)
libc.syscall(ctypes.c_long(openat), ctypes.c_long(-100), bad, ctypes.c_long(0), ctypes.c_long(0))
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
libc.syscall(ctypes.c_long(connect), ctypes.c_long(s.fileno()), bad, ctypes.c_long(16))
`

// hugeArgv is true with 20,000 arguments of 50 bytes (1 MB), through env.
func hugeArgv() []string {
	argv := []string{"true"}
	for i := range 20000 {
		argv = append(argv, fmt.Sprintf("%050d", i))
	}
	return argv
}

// opened says whether a process named comm opened path.
func opened(b *evidence.Bundle, comm, path string) bool {
	for _, e := range b.Kernel {
		if e.Open != nil && string(e.Comm) == comm && string(e.Open.Path()) == path {
			return true
		}
	}
	return false
}

// programOf is the program pid last executed before its other events,
// as the kernel resolved it.
func programOf(b *evidence.Bundle, pid uint32) string {
	prog := ""
	for _, e := range b.Kernel {
		if e.PID == pid && e.Kind == wire.KindExec {
			prog = string(e.Exec.File.Path)
		}
	}
	return prog
}

// A workload that touches a great many distinct paths cannot make vigil
// hold them: past the digest's limit they go to a scratch file, with the
// kernel layer and the time index, so from 100,000 to 400,000 distinct
// paths (and events) vigil's own peak hardly moves (2 MiB here, where
// held in memory the 300,000 more take 66 MiB). Every one of them still
// reaches the archive's surface, and nothing is left beside the archive.
func TestE2EManyDistinctPathsBoundedMemory(t *testing.T) {
	dir := requireBoundedPeak(t, "misses", "distinct paths", func(dir string, n int) []string {
		return []string{strconv.Itoa(n), filepath.Join(dir, "nowhere")}
	}, func(b *evidence.Bundle, dir string) (listed int) {
		for _, p := range b.Surface.OpenFailures {
			if strings.HasPrefix(string(p), filepath.Join(dir, "nowhere", "missing-")) {
				listed++
			}
		}
		return listed
	})
	// The two archives and phase logs, and not a scratch file.
	if ents, _ := os.ReadDir(dir); len(ents) != 4 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("%s holds %q, want the archives and phase logs only", dir, names)
	}
}

// Hostile: a workload that sends to hundreds of thousands of distinct
// addresses cannot grow vigil's memory (the surface's endpoints spill as
// its paths do), and every one of them reaches network_sent.
func TestE2EManyDistinctEndpointsBoundedMemory(t *testing.T) {
	requireBoundedPeak(t, "sends", "distinct destinations", func(_ string, n int) []string {
		return []string{strconv.Itoa(n)}
	}, func(b *evidence.Bundle, _ string) (listed int) {
		for _, e := range b.Surface.NetworkSent {
			if e.Family == "inet" && e.Port == 9 && strings.HasPrefix(string(e.Addr), "127.") {
				listed++
			}
		}
		return listed
	})
}

// requireBoundedPeak records the test binary's helper mode with 100,000
// and then 400,000 items (args gives its arguments), requires every item
// listed in the archive (listed counts them) with no drop, and vigil's own
// peak to grow by under 16 MiB between the two. It returns the directory
// the runs were in.
func requireBoundedPeak(t *testing.T, mode, items string, args func(dir string, n int) []string, listed func(b *evidence.Bundle, dir string) int) string {
	t.Helper()
	testenv.RequireRoot(t)
	dir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	peak := map[int]int64{}
	for _, n := range []int{100_000, 400_000} {
		var b *evidence.Bundle
		peak[n], b = recordPeak(t, dir, mode, n, append([]string{self}, args(dir, n)...)...)
		if l := listed(b, dir); l != n || b.Health.RingbufDrops.Total != 0 {
			t.Fatalf("%s %d: %d listed, %d drops", mode, n, l, b.Health.RingbufDrops.Total)
		}
	}
	grew := peak[400_000] - peak[100_000]
	t.Logf("vigil's peak: %d KiB at 100,000 %s, %d KiB at 400,000", peak[100_000], items, peak[400_000])
	if grew > 16<<10 {
		t.Fatalf("vigil's peak grew %d KiB for 300,000 more %s, want under 16 MiB", grew, items)
	}
	return dir
}

// recordPeak records the test binary's helper mode in dir (its n-th run;
// argv after "env HELPER"), and returns vigil's own peak RSS from the
// phase log and the verified archive.
func recordPeak(t *testing.T, dir, mode string, n int, argv ...string) (int64, *evidence.Bundle) {
	t.Helper()
	arc := filepath.Join(dir, fmt.Sprintf("%s-%d.tar.gz", mode, n))
	phases := filepath.Join(dir, fmt.Sprintf("phases-%d.json", n))
	args := append([]string{"record", "-q", "--run-id", fmt.Sprintf("e2e%s%d", mode, n), "--archive", arc, "--phase-log", phases, "--",
		"env", testenv.HelperEnv(mode)}, argv...)
	r := runVigil(t, dir, args...)
	if r.code != 0 {
		t.Fatalf("%s %d: exit %d: %s", mode, n, r.code, r.stderr)
	}
	var pl wire.PhaseLog
	data, err := os.ReadFile(phases)
	if err != nil || json.Unmarshal(data, &pl) != nil {
		t.Fatalf("phase log: %v %s", err, data)
	}
	return pl.MaxRSSKiB, verifyAndRead(t, arc)
}
