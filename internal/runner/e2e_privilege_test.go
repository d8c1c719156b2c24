//go:build linux

package runner

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"vigil/internal/archive"
	"vigil/internal/cgroup"
	"vigil/internal/testenv"
)

// nobody is the unprivileged uid and gid these tests run as.
const nobody = 65534

// unprivilegedDir is a temporary directory nobody may write archives to.
func unprivilegedDir(t *testing.T) string {
	t.Helper()
	// Not t.TempDir: its parent is private to root.
	out, err := os.MkdirTemp("", "vigil-test-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(out) })
	if err := os.Chmod(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(out, nobody, nobody); err != nil {
		t.Fatal(err)
	}
	return out
}

// delegatedCgroup makes a cgroup v2 directory owned by nobody beside this
// process's own, as systemd's Delegate= does for a user's service.
func delegatedCgroup(t *testing.T) string {
	t.Helper()
	self, err := cgroup.SelfDir()
	if err != nil {
		t.Fatal(err)
	}
	d := filepath.Join(self, fmt.Sprintf("vigil-test-delegated-%d", os.Getpid()))
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.Remove(d); err != nil {
			t.Errorf("removing %s: %v", d, err)
		}
	})
	for _, f := range []string{"", "cgroup.procs", "cgroup.threads", "cgroup.subtree_control"} {
		if err := os.Chown(filepath.Join(d, f), nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// What the documentation promises of privileges holds, both ways: root
// is not needed (CAP_BPF + CAP_PERFMON and a writable cgroup suffice),
// and each missing piece is named.
func TestE2EPrivileges(t *testing.T) {
	testenv.RequireRoot(t)
	testenv.RequireTool(t, "/usr/bin/setpriv")
	deleg := delegatedCgroup(t)
	for _, c := range []struct {
		name   string
		caps   string // setpriv capability list
		cgroup string // a cgroup to start in, or "" for this process's
		extra  []string
		code   int
		want   string
	}{
		{"no capabilities", "", "", nil, 125, "missing privilege CAP_BPF+CAP_PERFMON (or CAP_SYS_ADMIN)"},
		{"no capabilities, absent kernel allowed", "", "", []string{"--allow-absent-kernel"}, 125, "no write access to cgroup v2 directory"},
		{"bpf and perfmon, cgroup not writable", "+bpf,+perfmon", "", nil, 125, "no write access to cgroup v2 directory"},
		{"bpf, perfmon and dac_override", "+bpf,+perfmon,+dac_override", "", nil, 0, "kernel_layer complete"},
		{"bpf and perfmon in a delegated cgroup", "+bpf,+perfmon", deleg, nil, 0, "kernel_layer complete"},
		{"--user without setuid", "+bpf,+perfmon", deleg, []string{"--user", "65534:65534"}, 125, "--user: switching users needs CAP_SETUID and CAP_SETGID"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := unprivilegedDir(t)
			arc := filepath.Join(out, "a.tar.gz")
			priv := []string{fmt.Sprintf("--reuid=%d", nobody), fmt.Sprintf("--regid=%d", nobody), "--clear-groups"}
			if c.caps != "" {
				priv = append(priv, "--inh-caps="+c.caps, "--ambient-caps="+c.caps)
			}
			args := append(priv, testenv.Vigil(t), "record", "--archive", arc)
			args = append(append(args, c.extra...), "--", "cat", "/etc/hostname")
			// The shell moves itself into the cgroup first, as a login
			// into a delegated unit would be.
			script := `exec setpriv "$@"`
			if c.cgroup != "" {
				script = `echo $$ > "` + c.cgroup + `/cgroup.procs" && exec setpriv "$@"`
			}
			cmd := exec.Command("sh", append([]string{"-c", script, "sh"}, args...)...)
			cmd.Dir = out
			var stderr strings.Builder
			cmd.Stderr = &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != c.code || !strings.Contains(stderr.String(), c.want) {
				t.Fatalf("exit %d (%v), stderr %q; want %d with %q", code, err, stderr.String(), c.code, c.want)
			}
			oneLine(t, stderr.String())
			if c.code != 0 {
				if _, err := os.Stat(arc); err == nil {
					t.Fatal("archive written")
				}
				return
			}
			b, err := archive.Read(arc)
			if err != nil {
				t.Fatal(err)
			}
			if b.Health.KernelLayer.Status != "complete" || b.Run.Child == nil || b.Run.Child.UID != nobody {
				t.Fatalf("kernel_layer %s, child %+v", b.Health.KernelLayer.Status, b.Run.Child)
			}
		})
	}
}

// --user runs the command unprivileged under a privileged recorder: it
// is refused a root-only file (and the refusal is evidence), run.json says
// who it ran as, and an agent's SDK events still reach the archive.
func TestE2EUser(t *testing.T) {
	testenv.RequireRoot(t)
	dir := unprivilegedDir(t)
	secret := filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	arc := filepath.Join(dir, "user.tar.gz")
	r := runVigil(t, dir, "record", "--archive", arc, "--user", "nobody", "--",
		"sh", "-c", `cat "$0" || exit 3`, secret)
	if r.code != 3 {
		t.Fatalf("exit %d, want the child's 3: %s", r.code, r.stderr)
	}
	b := verifyAndRead(t, arc)
	if c := b.Run.Child; c == nil || c.UID != nobody || c.GID != nobody {
		t.Fatalf("run.json child %+v", c)
	}
	denied := false
	for _, e := range b.Kernel {
		if e.Open != nil && string(e.Open.Name.Requested) == secret && e.Open.Ret == -13 && e.Comm == "cat" {
			denied = true
		}
	}
	if !denied {
		t.Error("no failed open (EACCES) of the root-only file by cat")
	}

	agent := filepath.Join(dir, "agent.tar.gz")
	if r := runVigil(t, dir, "record", "--archive", agent, "--user", "65534:65534", "--", testenv.Vigil(t), "agent"); r.code != 0 {
		t.Fatalf("agent as nobody: exit %d: %s", r.code, r.stderr)
	}
	ab := verifyAndRead(t, agent)
	if ab.Health.SDKLayer.Status != "complete" || len(ab.SDK) == 0 || ab.Run.Child.UID != nobody || len(ab.Run.Child.Groups) != 0 {
		t.Fatalf("agent as nobody: sdk_layer %s, %d SDK events, child %+v", ab.Health.SDKLayer.Status, len(ab.SDK), ab.Run.Child)
	}

	// vigil's own run records vigil's ids.
	own := filepath.Join(dir, "own.tar.gz")
	if r := runVigil(t, dir, "record", "--archive", own, "--", "true"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if c := verifyAndRead(t, own).Run.Child; c == nil || c.UID != 0 {
		t.Fatalf("run without --user: child %+v", c)
	}
}
