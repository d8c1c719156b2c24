// Command startup times how long vigil takes to start: `vigil --help`,
// `vigil version` and `vigil --version` against `true` (the cost of a fork
// and exec of a minimal program), interleaved round by round so that load
// from other processes falls on every command alike.
//
//	go run ./scripts/startup                    # builds ./cmd/vigil, 50 rounds
//	go run ./scripts/startup -n 100 old=/tmp/vigil-old new=/tmp/vigil-new
//
// Each binary argument is PATH or LABEL=PATH; with none, ./cmd/vigil is built
// into a temporary directory. For every command it prints the median wall
// time and the median CPU time (user+sys of the child, less sensitive to a
// busy machine than wall time) with 95% distribution-free confidence
// intervals, then the median wall time less that of `true`.
//
// With -inittrace K it also runs each binary's --help under
// GODEBUG=inittrace=1 in every round and lists the K package initialisers
// with the largest median clock time, with their allocations, and the sum
// over all packages.
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"vigil/internal/stats"
)

type command struct {
	name string
	argv []string
	wall []float64 // ms
	cpu  []float64 // ms
}

func main() {
	rounds := flag.Int("n", 50, "rounds; each runs every command once")
	topInits := flag.Int("inittrace", 0, "list this many of the costliest package initialisers of each binary")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go run ./scripts/startup [-n ROUNDS] [[LABEL=]VIGIL...]")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *rounds < 6 {
		fail(fmt.Errorf("-n %d: need at least 6 rounds for a 95%% interval", *rounds))
	}
	bins := flag.Args()
	if len(bins) == 0 {
		dir, err := os.MkdirTemp("", "vigil-startup-")
		if err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "vigil")
		build := exec.Command("go", "build", "-o", bin, "./cmd/vigil")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fail(fmt.Errorf("go build ./cmd/vigil: %v", err))
		}
		bins = []string{bin}
	}
	truePath, err := exec.LookPath("true")
	if err != nil {
		fail(err)
	}
	cmds := []*command{{name: "true", argv: []string{truePath}}}
	var traces []*inittrace
	for _, b := range bins {
		label, path, ok := strings.Cut(b, "=")
		if !ok {
			label, path = "vigil", b
		}
		if _, err := os.Stat(path); err != nil {
			fail(fmt.Errorf("binary %s: %v", path, err))
		}
		for _, args := range [][]string{{"--help"}, {"version"}, {"--version"}} {
			argv := append([]string{path}, args...)
			// An older binary may lack a subcommand: leave it out rather
			// than time its error path.
			if _, _, err := run(argv); err != nil {
				fmt.Fprintf(os.Stderr, "skipping %s %s: %v\n", label, strings.Join(args, " "), err)
				continue
			}
			cmds = append(cmds, &command{name: label + " " + strings.Join(args, " "), argv: argv})
		}
		if *topInits > 0 {
			traces = append(traces, &inittrace{label: label, path: path, clock: map[string][]float64{}, bytes: map[string]int64{}})
		}
	}
	// One unmeasured round brings the binaries into the page cache.
	for _, c := range cmds {
		if _, _, err := run(c.argv); err != nil {
			fail(err)
		}
	}
	for range *rounds {
		for _, c := range cmds {
			wall, cpu, err := run(c.argv)
			if err != nil {
				fail(err)
			}
			c.wall = append(c.wall, ms(wall))
			c.cpu = append(c.cpu, ms(cpu))
		}
		for _, tr := range traces {
			if err := tr.run(); err != nil {
				fail(err)
			}
		}
	}
	base := stats.Median(cmds[0].wall)
	fmt.Printf("%d rounds; medians in ms with 95%% intervals\n", *rounds)
	fmt.Printf("%-24s %-22s %-22s %s\n", "command", "wall", "cpu (user+sys)", "wall - true")
	for _, c := range cmds {
		w := stats.MedianCI(c.wall, 0.95)
		u := stats.MedianCI(c.cpu, 0.95)
		fmt.Printf("%-24s %-22s %-22s %6.2f\n", c.name, interval(w), interval(u), w.Est-base)
	}
	for _, tr := range traces {
		tr.print(*topInits)
	}
}

// inittrace collects GODEBUG=inittrace=1 lines of one binary's --help.
type inittrace struct {
	label, path string
	clock       map[string][]float64 // ms per run, by package
	bytes       map[string]int64     // allocated by init, by package (the same every run)
	total       []float64            // ms, sum over packages, per run
}

// initLine matches "init PKG @T ms, C ms clock, B bytes, A allocs".
var initLine = regexp.MustCompile(`^init (\S+) @\S+ ms, (\S+) ms clock, (\d+) bytes, \d+ allocs$`)

func (tr *inittrace) run() error {
	c := exec.Command(tr.path, "--help")
	c.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := c.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s --help: %v", tr.path, err)
	}
	var sum float64
	for _, line := range strings.Split(string(out), "\n") {
		m := initLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		clock, _ := strconv.ParseFloat(m[2], 64)
		b, _ := strconv.ParseInt(m[3], 10, 64)
		tr.clock[m[1]] = append(tr.clock[m[1]], clock)
		tr.bytes[m[1]] = b
		sum += clock
	}
	if len(tr.clock) == 0 {
		return fmt.Errorf("%s --help printed no inittrace lines", tr.path)
	}
	tr.total = append(tr.total, sum)
	return nil
}

func (tr *inittrace) print(top int) {
	type row struct {
		pkg   string
		clock float64
	}
	var rows []row
	var bytes int64
	for pkg, xs := range tr.clock {
		rows = append(rows, row{pkg, stats.Median(xs)})
		bytes += tr.bytes[pkg]
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(b.clock, a.clock) })
	fmt.Printf("\n%s: package initialisers, median clock ms over rounds\n", tr.label)
	fmt.Printf("%8.2f ms %9d bytes  all %d packages\n", stats.Median(tr.total), bytes, len(rows))
	for _, r := range rows[:min(top, len(rows))] {
		fmt.Printf("%8.3f ms %9d bytes  %s\n", r.clock, tr.bytes[r.pkg], r.pkg)
	}
}

// run executes argv with output discarded and returns its wall time and the
// CPU time the child used.
func run(argv []string) (wall, cpu time.Duration, err error) {
	c := exec.Command(argv[0], argv[1:]...)
	// A file, not io.Discard: exec would otherwise copy the output through
	// a pipe and a goroutine, and time that too.
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return 0, 0, err
	}
	defer null.Close()
	c.Stdout, c.Stderr = null, null
	start := time.Now()
	err = c.Run()
	wall = time.Since(start)
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return 0, 0, fmt.Errorf("%s: %v", strings.Join(argv, " "), err)
		}
		return 0, 0, err
	}
	return wall, c.ProcessState.UserTime() + c.ProcessState.SystemTime(), nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func interval(iv stats.Interval) string {
	return fmt.Sprintf("%6.2f [%6.2f, %6.2f]", iv.Est, iv.Lo, iv.Hi)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "startup: "+err.Error())
	os.Exit(1)
}
