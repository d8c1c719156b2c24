package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Start-up budgets, in bytes allocated by package initialisation as
// GODEBUG=inittrace=1 reports it. Allocation counts are deterministic where
// init time is not, so these guard start-up without timing it (timing is
// scripts/startup's job). A parsed template or a compiled schema or counted
// regexp at package level costs 50 KB and more: it belongs in a function
// run on first use.
const (
	// vigilInitBudget holds for each vigil/internal package: a few maps
	// and error values.
	vigilInitBudget = 8 << 10
	// mainInitBudget is main's: cobra builds every command and its flags.
	mainInitBudget = 64 << 10
	// totalInitBudget is every package's, dependencies included. About
	// 1.7 MB of the 2.2 MB measured when this budget was set is santhosh-tekuri/jsonschema compiling its
	// metaschemas at init, which vigil cannot defer; a new dependency with
	// a heavy init shows up here.
	totalInitBudget = 3 << 20
)

// initCost is one line of GODEBUG=inittrace=1 output.
type initCost struct {
	pkg    string
	bytes  int64
	allocs int64
}

// initLine matches "init PKG @T ms, C ms clock, B bytes, A allocs".
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, (\d+) allocs$`)

func parseInittrace(stderr []byte) ([]initCost, error) {
	var out []initCost
	sc := bufio.NewScanner(bytes.NewReader(stderr))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "init ") {
			continue
		}
		m := initLine.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("unexpected inittrace line %q", line)
		}
		b, _ := strconv.ParseInt(m[2], 10, 64)
		a, _ := strconv.ParseInt(m[3], 10, 64)
		out = append(out, initCost{pkg: m[1], bytes: b, allocs: a})
	}
	return out, sc.Err()
}

func buildVigil(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "vigil")
	if out, err := exec.Command("go", "build", "-o", bin, "vigil/cmd/vigil").CombinedOutput(); err != nil {
		t.Fatalf("go build vigil/cmd/vigil: %v: %s", err, out)
	}
	return bin
}

// TestBuiltVigil checks what only the linked binary shows: its start-up
// cost and its build information.
func TestBuiltVigil(t *testing.T) {
	bin := buildVigil(t)
	t.Run("init budget", func(t *testing.T) { testInitBudget(t, bin) })
	t.Run("version", func(t *testing.T) { testVersionCommand(t, bin) })
}

// testInitBudget fails when starting vigil runs a heavy package
// initialiser: every command, --help included, pays for it.
func testInitBudget(t *testing.T, bin string) {
	for _, args := range [][]string{{"--help"}, {"version"}} {
		cmd := exec.Command(bin, args...)
		cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("vigil %v: %v: %s", args, err, stderr.Bytes())
		}
		costs, err := parseInittrace(stderr.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		// Without these the trace did not cover vigil's packages, and
		// every check below would pass on nothing.
		for _, want := range []string{"main", "vigil/internal/wire", "vigil/internal/report/render", "github.com/santhosh-tekuri/jsonschema/v6"} {
			if !slices.ContainsFunc(costs, func(c initCost) bool { return c.pkg == want }) {
				t.Fatalf("vigil %v: inittrace has no line for %s:\n%s", args, want, stderr.Bytes())
			}
		}
		var total int64
		for _, c := range costs {
			total += c.bytes
			switch {
			case c.pkg == "main" && c.bytes > mainInitBudget:
				t.Errorf("vigil %v: main's init allocates %d bytes (%d allocs), over its budget of %d", args, c.bytes, c.allocs, mainInitBudget)
			case strings.HasPrefix(c.pkg, "vigil/") && c.bytes > vigilInitBudget:
				t.Errorf("vigil %v: %s's init allocates %d bytes (%d allocs), over the budget of %d for a vigil package: compile or parse on first use instead", args, c.pkg, c.bytes, c.allocs, vigilInitBudget)
			}
		}
		if total > totalInitBudget {
			slices.SortFunc(costs, func(a, b initCost) int { return int(b.bytes - a.bytes) })
			t.Errorf("vigil %v: package initialisation allocates %d bytes, over the budget of %d; the largest: %v", args, total, totalInitBudget, costs[:5])
		}
	}
}

// testVersionCommand checks vigil version against the build it describes.
func testVersionCommand(t *testing.T, bin string) {
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		t.Fatalf("vigil version: %v", err)
	}
	listed, err := exec.Command("go", "list", "-m", "-f", "{{.Path}} {{.Version}}", "go.opentelemetry.io/otel", "github.com/cilium/ebpf").Output()
	if err != nil {
		t.Fatalf("go list -m: %v", err)
	}
	goVersion, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		t.Fatalf("go env GOVERSION: %v", err)
	}
	want := "vigil " + version + "\ngo " + string(goVersion) + string(listed)
	if string(out) != want {
		t.Errorf("vigil version printed\n%s\nwant\n%s", out, want)
	}
	// --version stays cobra's one line.
	out, err = exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatalf("vigil --version: %v", err)
	}
	if got, want := string(out), "vigil version "+version+"\n"; got != want {
		t.Errorf("vigil --version printed %q, want %q", got, want)
	}
}

func TestWriteVersion(t *testing.T) {
	info := &debug.BuildInfo{
		GoVersion: "go1.99.1",
		Deps: []*debug.Module{
			{Path: "go.opentelemetry.io/otel", Version: "v1.2.3"},
			{Path: "github.com/cilium/ebpf", Version: "v0.1.0", Replace: &debug.Module{Path: "../ebpf"}},
		},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}},
	}
	for _, c := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{info, "vigil " + version + "\ngo go1.99.1\ngo.opentelemetry.io/otel v1.2.3\ngithub.com/cilium/ebpf (replaced by ../ebpf)\nrevision abc123 (modified)\n"},
		{&debug.BuildInfo{}, "vigil " + version + "\ngo " + runtime.Version() + "\ngo.opentelemetry.io/otel unknown\ngithub.com/cilium/ebpf unknown\n"},
		{nil, "vigil " + version + "\ngo " + runtime.Version() + "\ngo.opentelemetry.io/otel unknown\ngithub.com/cilium/ebpf unknown\n"},
	} {
		var b bytes.Buffer
		writeVersion(&b, c.info)
		if b.String() != c.want {
			t.Errorf("writeVersion printed\n%s\nwant\n%s", b.String(), c.want)
		}
	}
}
