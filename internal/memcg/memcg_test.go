//go:build linux

package memcg

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"vigil/internal/testenv"
)

// The test binary doubles as a workload that allocates: "alloc MB
// [MARKER]" touches MB MiB and, with MARKER, holds it until MARKER.go
// exists, having created MARKER.ready.
func TestMain(m *testing.M) { testenv.Main(m, alloc) }

func alloc(name string, args []string) error {
	if name != "alloc" || len(args) < 1 {
		return fmt.Errorf("%s %q: want alloc MB [MARKER]", name, args)
	}
	mb, err := strconv.Atoi(args[0])
	if err != nil {
		return err
	}
	buf := make([]byte, mb<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1 // touch every page so it is charged
	}
	if len(args) > 1 {
		// Hold the memory: announce readiness, wait for release.
		if err := os.WriteFile(args[1]+".ready", nil, 0o644); err != nil {
			return err
		}
		for {
			if _, err := os.Stat(args[1] + ".go"); err == nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	// Reading the buffer keeps it alive until here.
	if buf[len(buf)/2] != 1 {
		return errors.New("memory not touched")
	}
	return nil
}

func controller(t *testing.T) *Controller {
	t.Helper()
	testenv.RequireRoot(t)
	c := Detect()
	if c.Mode() == None {
		t.Fatalf("no memory cgroup as root: %s", c.Reason())
	}
	return c
}

func runIn(t *testing.T, c *Controller, args ...string) int64 {
	t.Helper()
	g, err := c.New()
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if _, err := g.Kill(); err != nil {
			t.Error(err)
		}
		if err := g.Remove(); err != nil {
			t.Error(err)
		}
	}()
	cmd := inGroup(g, args...)
	cmd.Env = append(os.Environ(), testenv.HelperEnv("alloc"))
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	peak, err := g.Peak()
	if err != nil {
		t.Fatal(err)
	}
	return peak
}

func TestPeakGrowsWithAllocation(t *testing.T) {
	c := controller(t)
	small := runIn(t, c, os.Args[0], "1")
	big := runIn(t, c, os.Args[0], "96")
	t.Logf("%s peak: 1 MiB child %d bytes, 96 MiB child %d bytes", c.Source(), small, big)
	if small <= 0 {
		t.Fatalf("peak of a running child is %d", small)
	}
	if big-small < 80<<20 {
		t.Fatalf("allocating 95 MiB more raised the peak by only %d bytes", big-small)
	}
}

// A peak covers the whole tree, not just the direct child: two 48 MiB
// grandchildren that hold their memory at the same time count together.
func TestPeakCoversDescendants(t *testing.T) {
	c := controller(t)
	d := t.TempDir()
	script := `"$0" 48 "$1/a" & "$0" 48 "$1/b" &
until [ -e "$1/a.ready" ] && [ -e "$1/b.ready" ]; do sleep 0.01; done
touch "$1/a.go" "$1/b.go"; wait`
	peak := runIn(t, c, "/bin/sh", "-c", script, os.Args[0], d)
	t.Logf("tree peak with two 48 MiB grandchildren: %d", peak)
	if peak < 96<<20 {
		t.Fatalf("tree peak %d is below the two grandchildren's combined 96 MiB", peak)
	}
}

func TestKillEmptiesGroupAndRemove(t *testing.T) {
	c := controller(t)
	g, err := c.New()
	if err != nil {
		t.Fatal(err)
	}
	cmd := inGroup(g, "/bin/sh", "-c", "sleep 300 & sleep 300 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the shell and both sleeps are inside.
	deadline := time.Now().Add(10 * time.Second)
	for {
		p, _ := g.Procs()
		if len(p) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("group has %d processes, want 3", len(p))
		}
		time.Sleep(5 * time.Millisecond)
	}
	killed, err := g.Kill()
	if err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(killed) < 3 {
		t.Fatalf("killed %v, want at least 3 processes", killed)
	}
	if p, _ := g.Procs(); len(p) != 0 {
		t.Fatalf("processes left after Kill: %v", p)
	}
	if err := g.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Dir); !os.IsNotExist(err) {
		t.Fatalf("%s still exists", g.Dir)
	}
}

// inGroup returns a command that runs args inside g: created there on v2,
// or joining by its own pid before exec on v1.
func inGroup(g *Group, args ...string) *exec.Cmd {
	cmd := exec.Command(args[0], args[1:]...)
	if g.Prepare(cmd) {
		return cmd
	}
	join := `echo $$ > "$0/cgroup.procs" || exit 125; exec "$@"`
	return exec.Command("/bin/sh", append([]string{"-c", join, g.Dir}, args...)...)
}

func TestCommandRunsInsideGroup(t *testing.T) {
	c := controller(t)
	g, err := c.New()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Remove()
	out, err := inGroup(g, "/bin/cat", "/proc/self/cgroup").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), filepath.Base(g.Dir)) {
		t.Fatalf("command ran outside %s:\n%s", g.Dir, out)
	}
}
