package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"vigil/internal/archive"
	"vigil/internal/diff"
	"vigil/internal/evidence"
	"vigil/internal/gcpace"
)

// Exit codes of diff and check beyond 0 and 1.
const (
	// ExitArchiveInvalid: an input archive failed verification.
	ExitArchiveInvalid = 2
	// ExitCheckIncomplete: check saw no violation, but the record is not
	// complete for what the policy asks.
	ExitCheckIncomplete = 3
)

var diffFlags struct {
	json         bool
	normalize    []string
	noDefault    bool
	ignoreCounts bool
}

var diffCmd = &cobra.Command{
	Use:   "diff A.tar.gz B.tar.gz",
	Short: "What changed between two runs: files, execs, network, per tool call",
	Long: `diff verifies both archives as "vigil verify" does, then compares what the
runs did: every list of the capability surface (files read, written,
created, deleted, renamed, mode-changed, truncated; failed opens; execs and
failed execs; endpoints connected to, sent to, bound), and, when both runs
have an SDK layer, the same per tool call (calls matched by tool name and
ordinal: write_file#1 is each run's first write_file call).

Differences in observation health and outcome come first: when either record
is incomplete (kernel layer not complete, cgroup correlation not clean, or
io_uring operations on files or addresses it does not name) diff says so,
because a difference, or its absence, may be an event that record missed.

Names are normalized before comparing, so that parts that differ from run to
run by construction do not count:
  run-id    each archive's own run id becomes {run}
  proc-pid  /proc/PID[/task/TID] becomes /proc/{pid}[/task/{tid}]
  mktemp    tmp.XXXXXXXXXX becomes tmp.{rand}
  vigil-sdk the pid in vigil's own SDK event log, vigil-sdk-PID-..., becomes
            {pid}, however short
  hex       16 or more lowercase hex digits become {hex}
  number    4 or more decimal digits become {n} (temporary directory
            suffixes, numbered worker files), except after a "."
            (library versions such as libacl.so.1.1.2301 stay)
The last five apply to paths only (IP ports are compared as they are);
--no-default-rules turns them off. --normalize REGEX=REPLACEMENT adds a rule
(Go regexp syntax, split at the last "=", applied to every object before
the defaults, so it sees names as recorded; endpoints read "inet:ADDR:PORT",
"inet6:[ADDR]:PORT", "unix:PATH"). A normalized name that stands for a
different number of names in the two runs (5 worker files, then 10) is a
difference ("~") unless --ignore-counts.

Output: text ("-" only in A, "+" only in B, "~" in both with different
counts), or --json (schema "diff", id vigil.diff/v1).

Exit codes: 0 no differences; 1 differences; 2 an archive failed
verification; 125 bad flags or an archive could not be read.`,
	Args: cobra.ExactArgs(2),
	RunE: func(cmd *cobra.Command, args []string) error {
		gcpace.OneShot()
		var rules []diff.Rule
		for _, s := range diffFlags.normalize {
			r, err := diff.ParseRule(s)
			if err != nil {
				return fmt.Errorf("--normalize: %v", err)
			}
			rules = append(rules, r)
		}
		if !diffFlags.noDefault {
			rules = append(rules, diff.DefaultRules()...)
		}
		var in [2]diff.Input
		for i, path := range args {
			b, err := readVerified(cmd, path, ExitArchiveInvalid)
			if err != nil {
				return err
			}
			in[i] = diff.Input{Archive: path, Bundle: b}
		}
		r := diff.Compare(in[0], in[1], diff.Options{Rules: rules, IgnoreCounts: diffFlags.ignoreCounts})
		out := cmd.OutOrStdout()
		if diffFlags.json {
			if err := writeJSON(out, r); err != nil {
				return err
			}
		} else if _, err := fmt.Fprint(out, r.Text()); err != nil {
			return err
		}
		if !r.Equal {
			return exitError{1}
		}
		return nil
	},
}

// readVerified reads and verifies one archive as vigil verify does; a
// verification failure is reported on stderr as one line and exits with
// code (each command has its own), any other error is returned.
func readVerified(cmd *cobra.Command, path string, code int) (*evidence.Bundle, error) {
	if err := checkArchiveFile(path); err != nil {
		return nil, err
	}
	b, err := archive.Read(path)
	if err == nil {
		return b, nil
	}
	if !isVerifyFailure(err) {
		return nil, err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "vigil: %s: %v\n", path, err)
	return nil, exitError{code}
}

func init() {
	diffCmd.Flags().BoolVar(&diffFlags.json, "json", false, "print one JSON object (schema vigil.diff/v1) instead of text")
	diffCmd.Flags().StringArrayVar(&diffFlags.normalize, "normalize", nil, "add a normalization rule REGEX=REPLACEMENT (repeatable)")
	diffCmd.Flags().BoolVar(&diffFlags.ignoreCounts, "ignore-counts", false, "do not count an object standing for a different number of names as a difference")
	diffCmd.Flags().BoolVar(&diffFlags.noDefault, "no-default-rules", false, "compare names without the default normalization (run ids are still normalized)")
	rootCmd.AddCommand(diffCmd)
}
