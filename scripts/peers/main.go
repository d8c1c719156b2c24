//go:build linux

// Command peers compares the cost and completeness of vigil record with
// strace, bpftrace and the Linux audit system (auditd) on one workload:
// GNU tar extracting an archive of N small files into a fresh directory
// on a tmpfs. See README.md beside this file.
//
//	go run ./scripts/peers --quick          # smoke run, about two minutes
//	go run ./scripts/peers --out results    # N = 0, 1000, 10000, 100000
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"vigil/internal/atomicfile"
	"vigil/internal/cgroup"
)

// report is peers.json.
type report struct {
	Schema      string    `json:"schema"`
	Command     []string  `json:"command"`
	Started     time.Time `json:"started"`
	Finished    time.Time `json:"finished"`
	Seed        uint64    `json:"seed"`
	Blocks      int       `json:"blocks"`
	Warmup      int       `json:"warmup_blocks"`
	Ns          []int     `json:"ns"`
	FilesPerDir int       `json:"files_per_dir"`
	Machine     machine   `json:"machine"`
	// Expected defines the expected file opens and the events per N.
	Expected string `json:"expected"`
	// Profile is strace -f -c of the bare workload at each N: what the
	// workload really does in the traced set.
	Profile      []profileRow  `json:"profile"`
	ProfileCheck string        `json:"profile_check"`
	Archives     []archiveInfo `json:"archives"`
	Peers        []peerStatus  `json:"observers"`
	Samples      []sample      `json:"samples"`
	Results      []result      `json:"results"`
}

type profileRow struct {
	N int `json:"n"`
	straceProfile
}

const expectedText = "Expected file opens = N: GNU tar creates each regular file of the archive with one " +
	"openat(O_WRONLY|O_CREAT|O_EXCL); a file open is counted when an observer's event names a file of the archive " +
	"(dNNNN/vpfNNNNNNN.dat). The traced set (open, openat, openat2, execve, connect) also holds N-independent events " +
	"(tar's execve, the dynamic loader's and the archive's opens), one O_PATH open per directory (D = ceil(N/files_per_dir)) " +
	"and, when the archive has members, one open of the target directory, so N > 0 adds N + D + 1 events to it: the denominator of µs per event."

func main() {
	if err := run(os.Args[1:]); err != nil {
		if errors.Is(err, context.Canceled) {
			err = errors.New("interrupted: nothing written, host restored")
		}
		fmt.Fprintln(os.Stderr, "peers:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError struct{ error }

type options struct {
	quick       bool
	ns          []int
	blocks      int
	warmup      int
	seed        uint64
	observers   []string
	out         string
	vigil       string
	install     bool
	filesPerDir int
}

var allObservers = []string{"bare", "vigil", "vigil-resident", "strace", "bpftrace", "auditd"}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("peers", flag.ContinueOnError)
	var o options
	var ns, observers string
	var noInstall bool
	fs.BoolVar(&o.quick, "quick", false, "smoke run: N = 0,100,1000 and 6 blocks unless -n / -blocks say otherwise")
	fs.StringVar(&ns, "n", "", "comma-separated file counts (default 0,1000,10000,100000; 0 is needed to separate fixed costs)")
	fs.IntVar(&o.blocks, "blocks", 0, "measured blocks; each runs every observer once at every N (default 10, quick 6; 6 is the fewest for a 95% interval)")
	fs.IntVar(&o.warmup, "warmup", 1, "warm-up blocks, run first and not analysed")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the archives' content, the run order and the bootstrap")
	fs.StringVar(&observers, "observers", strings.Join(allObservers, ","), "observers to compare; bare is always included")
	fs.StringVar(&o.out, "out", "peers-results", "directory for peers.json and peers.md")
	fs.StringVar(&o.vigil, "vigil", "", "vigil binary (default: built from this module)")
	fs.BoolVar(&noInstall, "no-install", false, "do not apt-get install missing peers (they are reported as not run)")
	fs.IntVar(&o.filesPerDir, "files-per-dir", 1000, "files per directory in the archives")
	if err := fs.Parse(args); err != nil {
		return o, usageError{err}
	}
	if fs.NArg() > 0 {
		return o, usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	o.install = !noInstall
	if ns == "" {
		ns = "0,1000,10000,100000"
		if o.quick {
			ns = "0,100,1000"
		}
	}
	for _, f := range strings.Split(ns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || n > 10_000_000 {
			return o, usageError{fmt.Errorf("-n: %q is not a file count from 0 to 10000000", f)}
		}
		if !slices.Contains(o.ns, n) {
			o.ns = append(o.ns, n)
		}
	}
	slices.Sort(o.ns)
	if o.blocks == 0 {
		o.blocks = 10
		if o.quick {
			o.blocks = 6
		}
	}
	if o.blocks < 1 || o.warmup < 0 {
		return o, usageError{fmt.Errorf("-blocks %d / -warmup %d: need at least one block and no negative warm-up", o.blocks, o.warmup)}
	}
	if o.filesPerDir < 1 {
		return o, usageError{fmt.Errorf("-files-per-dir %d: must be positive", o.filesPerDir)}
	}
	o.observers = []string{"bare"}
	for _, f := range strings.Split(observers, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(allObservers, f) {
			return o, usageError{fmt.Errorf("-observers: unknown observer %q (known: %s)", f, strings.Join(allObservers, ", "))}
		}
		if !slices.Contains(o.observers, f) {
			o.observers = append(o.observers, f)
		}
	}
	return o, nil
}

func newObserver(name string) observer {
	switch name {
	case "bare":
		return bare{}
	case "vigil":
		return vigilRecord{}
	case "vigil-resident":
		return &vigilResident{}
	case "strace":
		return straceObserver{}
	case "bpftrace":
		return &bpftraceObserver{}
	default:
		return &auditdObserver{}
	}
}

func run(args []string) (err error) {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("must run as root: it mounts a tmpfs, loads BPF programs and drives the audit system")
	}
	if _, statErr := os.Stat(o.out); errors.Is(statErr, os.ErrNotExist) {
		if err := os.MkdirAll(o.out, 0o755); err != nil {
			return err
		}
		// A run that fails leaves no trace of its output, not even the
		// directory made for it.
		defer func() {
			if err != nil {
				os.Remove(o.out)
			}
		}()
	}
	if err := atomicfile.CheckTarget(filepath.Join(o.out, "peers.json")); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep := report{Schema: "vigil-peers/1", Command: append([]string{"go run ./scripts/peers"}, args...),
		Started: time.Now().UTC(), Seed: o.seed, Blocks: o.blocks, Warmup: o.warmup, Ns: o.ns,
		FilesPerDir: o.filesPerDir, Expected: expectedText}
	rep.Machine = describeMachine()

	work, err := os.MkdirTemp("", "vigil-peers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := mountTmpfs(work); err != nil {
		return err
	}
	defer unix.Unmount(work, unix.MNT_DETACH)
	rep.Machine.Tmpfs = mountLine(work)
	rep.Machine.Cgroup, _ = cgroup.FindV2Mount()

	h := &harness{work: work, stderr: filepath.Join(work, "stderr.txt"), install: o.install,
		env: []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", "HOME=/root"}}
	if h.tar, err = exec.LookPath("tar"); err != nil {
		return err
	}
	if err := ensureInstalled(ctx, o.install, []string{"time"}, gnuTime); err != nil {
		return fmt.Errorf("GNU time measures every command's peak memory: %w", err)
	}
	if slices.Contains(o.observers, "vigil") || slices.Contains(o.observers, "vigil-resident") {
		if h.vigil, err = vigilBinary(ctx, o.vigil, work); err != nil {
			return err
		}
	}

	smokeN := 10
	for _, n := range o.ns {
		if n > 0 {
			smokeN = n
			break
		}
	}
	archives := map[int]archiveInfo{}
	if err := os.Mkdir(filepath.Join(work, "archives"), 0o755); err != nil {
		return err
	}
	for _, n := range append(slices.Clone(o.ns), smokeN) {
		if _, ok := archives[n]; ok {
			continue
		}
		a, err := writeArchive(filepath.Join(work, "archives", fmt.Sprintf("files-%d.tar", n)), n, o.filesPerDir, o.seed)
		if err != nil {
			return fmt.Errorf("workload archive of %d files: %w", n, err)
		}
		archives[n] = a
		if slices.Contains(o.ns, n) {
			rep.Archives = append(rep.Archives, a)
		}
	}

	seq := 0
	newJob := func(n int) (job, error) {
		seq++
		j := job{n: n, archive: archives[n].Path, seq: seq,
			dest: filepath.Join(work, "x", strconv.Itoa(seq)), out: filepath.Join(work, "o", strconv.Itoa(seq))}
		if err := os.MkdirAll(j.dest, 0o755); err != nil {
			return j, err
		}
		return j, os.MkdirAll(j.out, 0o755)
	}
	cleanJob := func(j job) {
		os.RemoveAll(j.dest)
		os.RemoveAll(j.out)
	}

	// Every observer is set up and tried once before any sample, so
	// that whatever one changes on the host (the audit system, once
	// enabled, stays marked as such until reboot) holds for all samples.
	var active []observer
	defer func() {
		for i := len(active) - 1; i >= 0; i-- {
			active[i].teardown(h)
		}
	}()
	for _, name := range o.observers {
		ob := newObserver(name)
		st := peerStatus{Name: name, Command: ob.command(h)}
		if err := ob.setup(ctx, h); err != nil {
			ob.teardown(h)
			st.Reason = err.Error()
			rep.Peers = append(rep.Peers, st)
			fmt.Fprintf(os.Stderr, "peers: %s cannot run here: %s\n", name, st.Reason)
			continue
		}
		st.Version = ob.version(ctx, h)
		j, err := newJob(smokeN)
		if err != nil {
			return err
		}
		s, err := ob.run(ctx, h, j)
		cleanJob(j)
		if ctx.Err() != nil {
			ob.teardown(h)
			return ctx.Err()
		}
		if err != nil {
			ob.teardown(h)
			st.Reason = "trial run failed: " + err.Error()
			rep.Peers = append(rep.Peers, st)
			fmt.Fprintf(os.Stderr, "peers: %s cannot run here: %s\n", name, st.Reason)
			continue
		}
		st.Ran = true
		rep.Peers = append(rep.Peers, st)
		active = append(active, ob)
		if name != "bare" && s.FileOpens != smokeN {
			fmt.Fprintf(os.Stderr, "peers: %s captured %d of %d file opens in its trial run\n", name, s.FileOpens, smokeN)
		}
	}
	if len(active) == 0 || active[0].name() != "bare" {
		return errors.New("the bare workload itself failed: nothing to compare against")
	}

	if _, err := exec.LookPath("strace"); err == nil {
		for _, n := range o.ns {
			j, err := newJob(n)
			if err != nil {
				return err
			}
			p, err := profile(ctx, h, j)
			cleanJob(j)
			if err != nil {
				return fmt.Errorf("strace -c profile at N=%d: %w", n, err)
			}
			rep.Profile = append(rep.Profile, profileRow{N: n, straceProfile: p})
		}
		rep.ProfileCheck = checkProfile(rep.Profile, o.filesPerDir)
	} else {
		rep.ProfileCheck = "not profiled: strace is not installed"
	}
	fmt.Fprintf(os.Stderr, "peers: workload profile: %s\n", rep.ProfileCheck)

	rng := rand.New(rand.NewPCG(o.seed, 0x5eed))
	t0 := time.Now()
	for block := -o.warmup; block < o.blocks; block++ {
		order := slices.Clone(o.ns)
		rng.Shuffle(len(order), func(i, k int) { order[i], order[k] = order[k], order[i] })
		for _, n := range order {
			obs := slices.Clone(active)
			rng.Shuffle(len(obs), func(i, k int) { obs[i], obs[k] = obs[k], obs[i] })
			for _, ob := range obs {
				j, err := newJob(n)
				if err != nil {
					return err
				}
				s, err := ob.run(ctx, h, j)
				cleanJob(j)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				s.Seq, s.Block, s.Observer, s.N = j.seq, block, ob.name(), n
				if err != nil {
					s.Err = err.Error()
					fmt.Fprintf(os.Stderr, "peers: block %d, %s, N=%d: %s\n", block, ob.name(), n, s.Err)
				}
				rep.Samples = append(rep.Samples, s)
			}
		}
		fmt.Fprintf(os.Stderr, "peers: block %d of %d done (%s)\n", block+1, o.blocks, time.Since(t0).Round(time.Second))
	}
	rep.Machine.LoadAvg = append(rep.Machine.LoadAvg, loadavg())
	for _, ob := range active {
		rep.Machine.Tools[ob.name()] = ob.version(ctx, h)
	}
	names := make([]string, len(active))
	for i, ob := range active {
		names[i] = ob.name()
	}
	rep.Results = analyze(rep.Samples, names, o.ns, o.filesPerDir, o.seed)
	rep.Finished = time.Now().UTC()
	md := renderMarkdown(&rep)

	data, err := json.MarshalIndent(&rep, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(o.out, "peers.json"), append(data, '\n')); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(o.out, "peers.md"), []byte(md)); err != nil {
		os.Remove(filepath.Join(o.out, "peers.json"))
		return err
	}
	fmt.Print(md)
	return nil
}

// vigilBinary is the given binary, or one built from this module into
// dir.
func vigilBinary(ctx context.Context, given, dir string) (string, error) {
	if given != "" {
		p, err := filepath.Abs(given)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("-vigil: %w", err)
		}
		return p, nil
	}
	gomod, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil || strings.TrimSpace(string(gomod)) == "" || strings.TrimSpace(string(gomod)) == os.DevNull {
		return "", errors.New("not inside the vigil module: run from its checkout or pass -vigil")
	}
	out := filepath.Join(dir, "vigil")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./cmd/vigil")
	cmd.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/vigil: %v: %s", err, lastLine(string(msg)))
	}
	return out, nil
}

// profile is strace -f -c of the bare workload.
func profile(ctx context.Context, h *harness, j job) (straceProfile, error) {
	out := filepath.Join(j.out, "summary.txt")
	argv := append([]string{"strace", "-f", "-c", "-U", "calls,errors,name", "-e", straceTrace(), "-o", out}, h.tarArgv(j)...)
	if _, _, err := h.timed(ctx, argv); err != nil {
		return straceProfile{}, err
	}
	fh, err := os.Open(out)
	if err != nil {
		return straceProfile{}, err
	}
	defer fh.Close()
	return parseStraceSummary(fh)
}

// checkProfile says whether the workload does what "expected" assumes:
// every syscall of the set constant in N except openat, which grows by
// exactly addedEvents(N).
func checkProfile(rows []profileRow, filesPerDir int) string {
	var base *profileRow
	for i := range rows {
		if rows[i].N == 0 {
			base = &rows[i]
		}
	}
	if base == nil {
		return "not checked: N=0 was not profiled"
	}
	var bad []string
	for _, r := range rows {
		for _, s := range tracedSyscalls {
			want := base.Calls[s]
			if s == "openat" {
				want += addedEvents(r.N, filesPerDir)
			}
			if r.Calls[s] != want {
				bad = append(bad, fmt.Sprintf("N=%d: %s %d calls, expected %d", r.N, s, r.Calls[s], want))
			}
		}
	}
	if len(bad) > 0 {
		return "MISMATCH: " + strings.Join(bad, "; ")
	}
	return fmt.Sprintf("ok: at N=0 tar makes %d openat (%d failed), %d execve, %d connect (%d failed); N > 0 adds exactly N + D + 1 openat",
		base.Calls["openat"], base.Errors["openat"], base.Calls["execve"], base.Calls["connect"], base.Errors["connect"])
}
