// Command vigil records what a run did at kernel level and measures what each
// way of observing it costs. Subcommands live one per file in this package;
// each only parses flags and calls into internal/.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// version is overridden at link time (-ldflags "-X main.version=...").
var version = "0.1.0-dev"

// ExitRunnerFailure is the one exit code vigil uses for its own failures
// (bad flags, missing privileges, capture or archive errors). It is distinct
// from the codes a child commonly returns (0-2, 126, 127, 128+N).
const ExitRunnerFailure = 125

var rootCmd = &cobra.Command{
	Use:   "vigil",
	Short: "Kernel-level evidence of what a run did, and honest numbers for what observing it costs",
	Long: `vigil records what a command did at kernel level (processes, files, network)
into a verifiable evidence archive, runs a deterministic OpenTelemetry-traced
agent workload, and benchmarks what each observation layer costs.

  vigil record --archive run.tar.gz -- CMD...   capture a run (root)
  vigil verify run.tar.gz                       check an archive
  vigil inspect run.tar.gz                      summarize an archive
  vigil agent [knobs]                           the deterministic agent workload
  vigil bench --quick                           measure arms bare/A/B/C (root)
  vigil report DIR...                           statistics and findings
  vigil diff A.tar.gz B.tar.gz                  what changed between two runs
  vigil check --policy P.yaml run.tar.gz        judge a run against a policy
  vigil export run.tar.gz --otlp-endpoint URL   send a run to an OpenTelemetry backend

Exit codes: vigil record exits with the child's code (128+N for signal N;
126/127 when CMD cannot be executed / is not found); vigil verify and
inspect exit 1 when an archive fails verification (export too, and 2 when
the export itself fails); vigil bench exits 3 when
a cell fell short of its sample count and 130 when interrupted; every
failure of vigil itself (bad flags or input, missing privileges) exits 125.`,
	SilenceUsage:  true,
	SilenceErrors: true,
	Version:       version,
}

// exitError carries a specific exit code through cobra without printing.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func init() {
	// A bad flag names the subcommand it was given to ("vigil verify:
	// unknown flag: --bogus"), not just the flag.
	rootCmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		if cmd == rootCmd {
			return err
		}
		return fmt.Errorf("%s: %w", strings.TrimPrefix(cmd.CommandPath(), rootCmd.Name()+" "), err)
	})
}

func main() {
	err := rootCmd.Execute()
	if err == nil {
		return
	}
	var ee exitError
	if errors.As(err, &ee) {
		os.Exit(ee.code)
	}
	fmt.Fprintln(os.Stderr, "vigil: "+err.Error())
	os.Exit(ExitRunnerFailure)
}
