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
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
	}
	base := stats.Median(cmds[0].wall)
	fmt.Printf("%d rounds; medians in ms with 95%% intervals\n", *rounds)
	fmt.Printf("%-24s %-22s %-22s %s\n", "command", "wall", "cpu (user+sys)", "wall - true")
	for _, c := range cmds {
		w := stats.MedianCI(c.wall, 0.95)
		u := stats.MedianCI(c.cpu, 0.95)
		fmt.Printf("%-24s %-22s %-22s %6.2f\n", c.name, interval(w), interval(u), w.Est-base)
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
