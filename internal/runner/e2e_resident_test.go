//go:build linux

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"vigil/internal/testenv"
)

// vigil resident load, record taking the set, and unload, as a user runs
// them; run.json says where each run's programs came from.
func TestE2EResident(t *testing.T) {
	testenv.RequireRoot(t)
	work := t.TempDir()
	mnt := filepath.Join(work, "bpf")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("bpf", mnt, "bpf", 0, "mode=0700"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, 0); err != nil {
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	dir := filepath.Join(mnt, "vigil")
	arc := filepath.Join(work, "a.tar.gz")

	if r := runVigil(t, work, "resident", "status", "--resident-dir", dir); r.code != 0 || !strings.Contains(r.stdout, "no resident set") {
		t.Fatalf("status before load: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	r := runVigil(t, work, "record", "--programs", "resident", "--resident-dir", dir, "--archive", arc, "--", "true")
	if r.code != 125 || !strings.Contains(r.stderr, "vigil resident load") {
		t.Fatalf("record --programs resident without a set: exit %d, %q", r.code, r.stderr)
	}
	oneLine(t, r.stderr)
	if _, err := os.Stat(arc); err == nil {
		t.Fatal("an archive was written")
	}
	r = runVigil(t, work, "record", "--programs", "pinned", "--archive", arc, "--", "true")
	if r.code != 125 || !strings.Contains(r.stderr, `--programs "pinned"`) {
		t.Fatalf("record --programs pinned: exit %d, %q", r.code, r.stderr)
	}
	notBPF := filepath.Join(work, "plain", "vigil")
	os.Mkdir(filepath.Dir(notBPF), 0o700)
	if r := runVigil(t, work, "resident", "load", "--resident-dir", notBPF); r.code != 125 || !strings.Contains(r.stderr, "not on a BPF file system") {
		t.Fatalf("load outside a BPF file system: exit %d, %q", r.code, r.stderr)
	}

	if r := runVigil(t, work, "resident", "load", "--resident-dir", dir); r.code != 0 || !strings.Contains(r.stdout, "loaded in") {
		t.Fatalf("load: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if r := runVigil(t, work, "resident", "status", "--resident-dir", dir); r.code != 0 || !strings.Contains(r.stdout, "this binary's, free") {
		t.Fatalf("status: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	for _, c := range []struct{ programs, source string }{{"auto", "resident"}, {"load", "loaded"}, {"resident", "resident"}} {
		r := runVigil(t, work, "record", "--programs", c.programs, "--resident-dir", dir, "--archive", arc, "--", "sh", "-c", "cat /etc/hostname >/dev/null")
		if r.code != 0 {
			t.Fatalf("record --programs %s: exit %d: %s", c.programs, r.code, r.stderr)
		}
		b := verifyAndRead(t, arc)
		p := b.Run.Programs
		if p == nil || p.Source != c.source || p.Fallback != "" || p.StaleRecordsDiscarded != 0 {
			t.Fatalf("record --programs %s: capture_programs %+v, want source %s", c.programs, p, c.source)
		}
		if b.Health.KernelLayer.Status != "complete" || b.Health.CgroupCorrelation.Status != "clean" {
			t.Fatalf("record --programs %s: kernel %s, correlation %s", c.programs, b.Health.KernelLayer.Status, b.Health.CgroupCorrelation.Status)
		}
		var opened bool
		for _, e := range b.Kernel {
			opened = opened || e.Open != nil && string(e.Open.Path()) == "/etc/hostname"
		}
		if !opened {
			t.Fatalf("record --programs %s: the open of /etc/hostname is not in the archive", c.programs)
		}
	}
	if r := runVigil(t, work, "inspect", arc); r.code != 0 || !strings.Contains(r.stdout, "capture programs    resident set ") {
		t.Fatalf("inspect: exit %d, %q", r.code, r.stdout)
	}
	// Another ring size has no set: the run says which sets are there.
	r = runVigil(t, work, "record", "--ring-size", "2MiB", "--resident-dir", dir, "--archive", arc, "--", "true")
	if r.code != 0 || !strings.Contains(r.stderr, "resident set not used") || !strings.Contains(r.stderr, "--ring-size 2MiB") {
		t.Fatalf("record --ring-size 2MiB beside the 8MiB set: exit %d, %q", r.code, r.stderr)
	}
	if p := verifyAndRead(t, arc).Run.Programs; p == nil || p.Source != "loaded" || !strings.Contains(p.Fallback, "this binary's, for another ring size") {
		t.Fatalf("record --ring-size 2MiB beside the 8MiB set: capture_programs %+v", p)
	}
	if r := runVigil(t, work, "resident", "unload", "--resident-dir", dir); r.code != 0 || !strings.Contains(r.stdout, "unloaded") {
		t.Fatalf("unload: exit %d, %q %q", r.code, r.stdout, r.stderr)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s left after unload: %v", dir, err)
	}
}
