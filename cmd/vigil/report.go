package main

import (
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"vigil/internal/report"
	"vigil/internal/wire"
)

func init() {
	o := report.DefaultOptions()
	var out, tolerance, wallFloor, memFloor, fromSummary string
	cmd := &cobra.Command{
		Use:   "report {DIR... | --from-summary FILE}",
		Short: "Statistics and findings from vigil bench output directories",
		Long: `vigil report reads plan.json and samples.jsonl from each DIR (shards of one
plan are merged; other host classes are reported side by side) and writes
summary.json, bmf.json, bench.txt, findings.md and report.html into --out
(default: the single DIR), then prints a summary table.

Decomposition verdicts compare the per-block interaction C - A - B + bare
with a tolerance of max(--tolerance percent of the bare median,
--tolerance-wall-floor) for wall time and max(--tolerance percent,
--tolerance-mem-floor) for memory.

With --from-summary FILE, every output is rendered again from a
summary.json alone (no plan or samples), into --out (default: FILE's
directory); the files are the ones the original report wrote.

Bad input exits 125 with a one-line error and writes nothing.`,
		RunE: func(cmd *cobra.Command, dirs []string) error {
			fail := func(err error) error {
				fmt.Fprintln(cmd.ErrOrStderr(), "vigil report: "+err.Error())
				return exitError{ExitRunnerFailure}
			}
			if fromSummary != "" {
				if len(dirs) > 0 {
					return fail(fmt.Errorf("--from-summary takes no DIR arguments"))
				}
				// The summary's statistics are final; an analysis flag
				// would be silently ignored.
				for _, name := range []string{"tolerance", "tolerance-wall-floor", "tolerance-mem-floor", "confidence", "bootstrap"} {
					if cmd.Flags().Changed(name) {
						return fail(fmt.Errorf("--%s has no effect with --from-summary: the summary's statistics are final", name))
					}
				}
				if out == "" {
					out = filepath.Dir(fromSummary)
				}
				s, err := report.ReadSummary(fromSummary)
				if err != nil {
					return fail(err)
				}
				if err := report.WriteFromSummary(out, s); err != nil {
					return fail(err)
				}
				if err := finish(cmd, out, s); err != nil {
					return fail(err)
				}
				return nil
			}
			if len(dirs) == 0 {
				return fail(fmt.Errorf("no input directory given (vigil report DIR... or --from-summary FILE)"))
			}
			var err error
			if o.TolerancePct, err = parsePercent(tolerance); err != nil {
				return fail(fmt.Errorf("--tolerance %q: %v", tolerance, err))
			}
			d, err := time.ParseDuration(wallFloor)
			if err != nil || d < 0 {
				return fail(fmt.Errorf("--tolerance-wall-floor %q: want a duration like 1ms", wallFloor))
			}
			o.WallFloorNS = float64(d.Nanoseconds())
			if o.MemFloorBytes, err = parseBytes(memFloor); err != nil {
				return fail(fmt.Errorf("--tolerance-mem-floor %q: %v", memFloor, err))
			}
			if out == "" {
				if len(dirs) > 1 {
					return fail(fmt.Errorf("--out is required with several DIRs"))
				}
				out = dirs[0]
			}
			o.Version = version
			o.Inputs = dirs
			plans, samples, err := report.Load(dirs...)
			if err != nil {
				return fail(err)
			}
			s, err := report.WriteMerged(out, plans, samples, dirs, o)
			if err != nil {
				return fail(err)
			}
			if err := finish(cmd, out, s); err != nil {
				return fail(err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "output directory (default: the single input DIR)")
	f.StringVar(&fromSummary, "from-summary", "", "render every output again from this summary.json instead of bench directories")
	f.StringVar(&tolerance, "tolerance", "5%", "additivity tolerance as a percentage of the bare arm's median")
	f.StringVar(&wallFloor, "tolerance-wall-floor", "1ms", "smallest wall-time tolerance")
	f.StringVar(&memFloor, "tolerance-mem-floor", "1MiB", "smallest memory tolerance (bytes, or KiB/MiB/GiB)")
	f.Float64Var(&o.Confidence, "confidence", o.Confidence, "confidence level of every interval")
	f.IntVar(&o.BootstrapReps, "bootstrap", o.BootstrapReps, "bootstrap resamples for ratio intervals")
	rootCmd.AddCommand(cmd)
}

// finish prints the summary table and where the outputs went.
func finish(cmd *cobra.Command, out string, s *wire.Summary) error {
	if err := report.WriteTable(cmd.OutOrStdout(), s); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %s/{%s,%s,%s,%s,%s}\n", out, report.SummaryFile, report.BMFFile, report.BenchTxtFile, report.FindingsFile, report.HTMLFile)
	return nil
}

func parsePercent(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("want a non-negative percentage like 5%%")
	}
	return v, nil
}

func parseBytes(s string) (float64, error) {
	s = strings.TrimSpace(s)
	mult := 1.0
	for _, u := range []struct {
		suf string
		m   float64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}} {
		if strings.HasSuffix(s, u.suf) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suf)), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || !(v >= 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("want a non-negative size like 1MiB")
	}
	return v * mult, nil
}
