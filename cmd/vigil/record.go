//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"vigil/internal/affinity"
	"vigil/internal/archive"
	"vigil/internal/attest"
	"vigil/internal/capture"
	"vigil/internal/otlpexport"
	"vigil/internal/runner"
)

func init() {
	var o runner.Options
	var quiet bool
	var signKey, maxMemory, ringSize, cpus, runnerCPUs, programs string
	var export otlpexport.Target
	cmd := &cobra.Command{
		Use:   "record --archive FILE [flags] -- CMD [ARGS...]",
		Short: "Run a command under kernel observation and write an evidence archive (root)",
		Long: `record runs CMD inside a fresh cgroup v2 session with eBPF capture attached to
that session, waits until every process of the session is gone, and writes a
byte-reproducible evidence archive (check it with vigil verify).

The child is placed in the session cgroup before it executes (clone3 with
CLONE_INTO_CGROUP); descendants that double-fork, setsid or create sub-cgroups
stay covered. After CMD exits, processes still in the session get --grace to
finish, then are killed via cgroup.kill and counted in the archive's health.
SIGINT, SIGTERM, SIGHUP and SIGQUIT are forwarded to CMD; once CMD has exited,
one of them ends the grace period early, and after that (drain, archive
write) changes nothing: the evidence is written. Before CMD starts, one of
them ends the run (exit 125, nothing written, nothing left). If vigil is
killed outright (SIGKILL), CMD is killed with it (parent-death signal); the
next vigil start removes the session cgroup the killed one left, with any
descendant still in it, its temporary archive files and its private SDK
event log.

While the run lasts, the compressed kernel layer, the time index
correlation needs (9-17 bytes per event), and the paths, renames and
network endpoints the capability surface will list once they are many
(65,536, or 4 MiB of them), are kept in scratch files without a name in
the archive's directory, so that vigil's memory does not grow with the
run's events, paths or addresses (the tasks alive at once stay in
memory).
Nothing of them is left on disk however vigil ends (on a file system
without O_TMPFILE a scratch file has a name for an instant; the next
record beside it removes one a killed vigil left there).

The capture's programs are loaded for the run (most of what record costs
before CMD starts), or taken from the resident set "vigil resident load"
pinned, when there is one for this binary and --ring-size and no other
record holds it (--programs; see vigil resident --help). run.json's
capture_programs says which, and why a set that was there was not used.

The session is a child of vigil's own cgroup v2 named vigil-<pid>-<run id>
(on hybrid hosts under /sys/fs/cgroup/unified). Sessions left by a vigil that
died are removed at the start of the next run, their processes killed.
--phase-log receives the runner's phase timings (preflight, attach, cgroup,
spawn, child_runtime, drain, archive_write, teardown, in ms); run.json holds
those that end before the archive is written.

--user runs CMD and everything it starts as another user (with that user's
groups; an explicit GROUP or GID replaces them), so an untrusted workload
does not run with vigil's privileges. run.json records the ids CMD started
with ("child": uid, gid, groups) with or without --user.

Privileges: root, or CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN) to load the
probes, plus write access to vigil's cgroup v2 directory for the session
(a delegated cgroup, or CAP_DAC_OVERRIDE); --user also takes CAP_SETUID and
CAP_SETGID.

--max-pids and --max-memory cap the command's process tree (a fork bomb, a
workload that would exhaust memory) through the pids and memory
controllers: in the session cgroup when the host enables them there, else
in cgroup v1 groups beside it (hybrid hosts). A fork past the cap fails
with EAGAIN; memory past the cap is reclaimed, then the OOM killer kills
inside the tree, never vigil. run.json's "limits" records each cap, where
it was applied and how often it bit (refused forks, OOM kills, peak).
vigil never changes which controllers a cgroup enables: when a cap cannot
be applied, record refuses to start and says why.

--otlp-endpoint sends the run to an OpenTelemetry backend once the archive
is written, exactly as "vigil export ARCHIVE --otlp-endpoint URL" would (see
vigil export --help). The archive stays the source of truth: an export
failure is reported on stderr and does not change the exit code. CMD always
starts inside the run's trace: TRACEPARENT (and TRACESTATE) name the run's
span, replacing inherited values, so an OpenTelemetry SDK in CMD continues
the trace; when vigil itself was started with TRACEPARENT, the run is a
child of that span. run.json "trace" records the ids.

--sign-key signs the archive with an ed25519 key (vigil keygen makes one): a
DSSE envelope over an in-toto statement naming manifest.json and every entry
by sha256, checked by vigil verify --pubkey.

CMD sees VIGIL_RUN_ID and VIGIL_SDK_EVENT_LOG (the file where it may report
its own tool calls as SDK events), and TRACEPARENT.

Exit codes:
  the child's exit code, or 128+N when signal N killed it
  125  vigil itself failed (bad flags, missing privileges, capture or
       archive errors); no archive, session cgroup or child is left behind
  126  CMD was found but cannot be executed
  127  CMD was not found`,
		Example: `  vigil record --archive run.tar.gz -- make test
  vigil record --archive run.tar.gz --phase-log phases.json -- ./agent --seed 1
  vigil record --archive run.tar.gz --grace 200ms -- sh -c 'daemon &'
  vigil record --archive run.tar.gz --allow-absent-kernel -- python3 job.py
  vigil record --archive run.tar.gz --sign-key ci.key -- ./agent
  vigil record --archive run.tar.gz --user nobody -- ./untrusted-agent
  vigil record --archive run.tar.gz --max-pids 256 --max-memory 2GiB -- ./agent
  vigil record --archive run.tar.gz --otlp-endpoint http://127.0.0.1:4318 -- vigil agent --otlp-endpoint http://127.0.0.1:4318`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// vigil's notices and errors go to stderr; a reader that went
			// away (vigil record ... 2>&1 | head) must not kill vigil
			// mid-run by SIGPIPE, leaving the session and the child
			// behind: the write fails with EPIPE instead. The child is
			// unaffected: exec resets caught signals to the default.
			signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
			o.Argv = args
			var err error
			if cpus != "" {
				if o.ChildCPUs, err = affinity.Parse("--cpus", cpus); err != nil {
					return err
				}
			}
			if runnerCPUs != "" {
				if o.RunnerCPUs, err = affinity.Parse("--runner-cpus", runnerCPUs); err != nil {
					return err
				}
			}
			if o.RingSize, err = parseRingSize(ringSize); err != nil {
				return err
			}
			if o.Programs, err = parsePrograms(programs); err != nil {
				return err
			}
			if maxMemory != "" {
				v, err := parseBytes(maxMemory)
				if err != nil || v < 1 || v > math.MaxInt64/2 {
					return fmt.Errorf("--max-memory %q: want a size like 512MiB", maxMemory)
				}
				o.Limits.MaxMemory = int64(v)
			}
			if export.Endpoint != "" {
				if err := checkExportTarget(export); err != nil {
					return err
				}
			}
			o.VigilVersion = version
			if signKey != "" {
				k, err := attest.LoadKey(signKey)
				if err != nil {
					return fmt.Errorf("--sign-key %v", err)
				}
				o.SignKey = k
			}
			if !quiet {
				o.Log = os.Stderr
			}
			recordGC()
			res, err := runner.Record(context.Background(), o)
			if err != nil {
				var re *runner.Error
				if errors.As(err, &re) {
					fmt.Fprintln(cmd.ErrOrStderr(), "vigil: "+re.Error())
					return exitError{re.Code}
				}
				return err
			}
			if export.Endpoint != "" {
				exportRecorded(o.ArchivePath, export, quiet)
			}
			if res.ExitCode != 0 {
				return exitError{res.ExitCode}
			}
			return nil
		},
	}
	f := cmd.Flags()
	// Everything after the first non-flag argument belongs to CMD, with or
	// without "--".
	f.SetInterspersed(false)
	f.StringVar(&o.ArchivePath, "archive", "", "write the evidence archive to `FILE` (required; replaced atomically)")
	f.StringVar(&ringSize, "ring-size", "", fmt.Sprintf("ring-buffer size, `SIZE` in bytes or e.g. 1MiB (power of two, from the page size to 1GiB; 0 or unset: %d MiB). A smaller ring can cost less per event, and fills sooner in a burst: a record that does not fit is a counted drop", runner.DefaultRingSize>>20))
	f.StringVar(&programs, "programs", "auto", "where the capture's programs come from: `auto` (the resident set vigil resident load pinned, when there is one and no other record holds it; else loaded for this run), resident (that set, or fail), load (always loaded for this run)")
	f.StringVar(&o.ResidentDir, "resident-dir", capture.DefaultResidentDir, "`DIR` of resident sets (a directory on a BPF file system)")
	f.DurationVar(&o.Grace, "grace", runner.DefaultGrace, "how long processes left after CMD exits may run before they are killed")
	f.StringVar(&o.PhaseLogPath, "phase-log", "", "write the runner's phase timings as JSON to `FILE` (schema phases)")
	f.StringVar(&o.SDKEventLogPath, "sdk-event-log", "", "`FILE` CMD writes its SDK events to (truncated at start; default: a private temporary file)")
	f.BoolVar(&o.AllowAbsentKernel, "allow-absent-kernel", false, "record even when kernel capture is unavailable (archive says kernel_layer absent, and why)")
	f.StringVar(&o.RunID, "run-id", "", "run id (1-64 of [A-Za-z0-9_.]; default: 16 random hex characters)")
	f.StringVar(&o.User, "user", "", "run CMD as `USER` (NAME, UID, NAME:GROUP or UID:GID) while vigil keeps its privileges; run.json records the ids")
	f.Int64Var(&o.Limits.MaxPids, "max-pids", 0, "cap the command's tree at `N` tasks (processes and threads; pids controller; 0 = no cap)")
	f.StringVar(&maxMemory, "max-memory", "", "cap the command's tree at `SIZE` of memory, e.g. 512MiB (memory controller; past it the OOM killer kills inside the tree)")
	f.StringVar(&cpus, "cpus", "", "pin CMD and everything it starts to the CPUs in `LIST` (kernel CPU list, e.g. 1 or 0-1,3)")
	f.StringVar(&runnerCPUs, "runner-cpus", "", "pin vigil itself (its reader and archive writer) to the CPUs in `LIST`, apart from CMD")
	f.StringVar(&signKey, "sign-key", "", "sign the archive with the ed25519 private key in `FILE` (PEM; see vigil keygen)")
	f.BoolVarP(&quiet, "quiet", "q", false, "print nothing of vigil's own except errors")
	addExportFlags(f.StringVar, f.IntVar, f.DurationVar, &export, false)
	rootCmd.AddCommand(cmd)
}

// parseRingSize reads --ring-size ("" is the default, 0).
func parseRingSize(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	v, err := parseBytes(s)
	if err != nil || v != math.Trunc(v) {
		return 0, fmt.Errorf("--ring-size %q: want a size in bytes like 1MiB or 4096", s)
	}
	if v > 1<<30 {
		return 0, fmt.Errorf("--ring-size %q: at most 1GiB", s)
	}
	return int(v), nil
}

// parsePrograms reads --programs.
func parsePrograms(s string) (capture.ResidentMode, error) {
	switch s {
	case "auto":
		return capture.ResidentAuto, nil
	case "resident":
		return capture.ResidentRequire, nil
	case "load":
		return capture.ResidentOff, nil
	}
	return 0, fmt.Errorf("--programs %q: want auto, resident or load", s)
}

// exportRecorded sends a just-written archive to an OTLP endpoint. It
// reports, and never fails the run: the archive is complete either way.
func exportRecorded(path string, t otlpexport.Target, quiet bool) {
	b, err := archive.Read(path)
	if err == nil {
		var res otlpexport.Result
		res, err = otlpexport.Do(context.Background(), b, t)
		if !quiet || err != nil {
			fmt.Fprint(os.Stderr, "vigil export: "+res.Text(t))
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "vigil: %v (the archive %s is complete; retry with vigil export %s --otlp-endpoint %s)\n", err, path, path, t.Endpoint)
	}
}

// recordGC collects record's garbage twice as often as Go's default unless
// GOGC says otherwise: record's live heap is small (about 10 MiB through a
// run of 300,000 events) and its garbage comes at the event rate, so the
// default lets its peak reach twice the live heap; the cost is about 1%
// more CPU in record, none in the command (scripts/perf-capture.sh tar).
func recordGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(50)
	}
}
