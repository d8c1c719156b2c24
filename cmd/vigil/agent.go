package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/spf13/cobra"

	"vigil/internal/atomicfile"
	"vigil/internal/wire"
	"vigil/internal/workload"
)

func init() { rootCmd.AddCommand(newAgentCmd()) }

func newAgentCmd() *cobra.Command {
	cfg := workload.DefaultConfig()
	var (
		payloadName    string
		spanEventLimit int
		resultOut      string
	)
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the deterministic, OpenTelemetry-traced agent workload",
		Long: `vigil agent runs a deterministic agent: a scripted fake model asks for a fixed
sequence of tool calls (write_file, read_file), the agent executes them for
real under --work-dir and answers. It then writes --kernel-events worker files
(each opened twice: create+truncate+write, then read) and adds --span-events
events to the root span. The same flags give the same trace shape every run.

Tracing uses the OpenTelemetry Go SDK with its standard environment variables
(OTEL_SPAN_EVENT_COUNT_LIMIT and the other span limits, OTEL_RESOURCE_ATTRIBUTES,
OTEL_TRACES_SAMPLER, OTEL_EXPORTER_OTLP_* for --otlp-endpoint). OTEL_SDK_DISABLED=true
turns tracing off like --otel=false. The SDK keeps the newest N events of a span
(N=128 by default) and counts the rest as dropped; the result line reports both.

When VIGIL_SDK_EVENT_LOG is set (vigil record sets it, with VIGIL_RUN_ID),
tool-call events are appended to that file, with or without tracing.

Output: one JSON result line (schema vigil.agent-result/v1) on stdout or in
--result-out. Exit codes: 0 ok; 1 the run failed (a tool call, the worker
files or the trace file; the result line says status "error"); 125 bad input
or setup failure (no files are left behind).

Testing aid: --fail-every K --fail-counter-file F makes every K-th invocation
(counted in F) fail its first tool call and exit 1, so a harness can test how
it handles failing samples. The environment variables VIGIL_AGENT_FAIL_EVERY
and VIGIL_AGENT_FAIL_COUNTER_FILE do the same when the flags are not given.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f := cmd.Flags()
			if f.Changed("payload") && f.Changed("payload-bytes") {
				return errors.New("--payload: give either --payload or --payload-bytes, not both")
			}
			if f.Changed("payload") {
				n, err := workload.PayloadSize(payloadName)
				if err != nil {
					return err
				}
				cfg.PayloadBytes = n
			}
			if f.Changed("span-event-limit") {
				cfg.SpanEventLimit = &spanEventLimit
			}
			if err := failKnobFromEnv(&cfg, f.Changed("fail-every"), f.Changed("fail-counter-file")); err != nil {
				return err
			}
			return runAgent(cmd, cfg, resultOut)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.WorkDir, "work-dir", "", "directory for the tool workspace and worker files (default: a fresh temporary directory, removed afterwards)")
	f.BoolVar(&cfg.Keep, "keep", false, "leave the run's files in the work directory")
	f.IntVar(&cfg.KernelEvents, "kernel-events", 0, "worker files to write and read back (2 opens each)")
	f.IntVar(&cfg.SpanEvents, "span-events", 0, "events to add to the root span")
	f.IntVar(&cfg.Concurrency, "concurrency", cfg.Concurrency, "parallel workers for the worker files")
	f.StringVar(&payloadName, "payload", "small", "payload size per worker file and span event: small (128), medium (4096), large (65536)")
	f.IntVar(&cfg.PayloadBytes, "payload-bytes", cfg.PayloadBytes, "payload size in bytes (instead of --payload)")
	f.BoolVar(&cfg.OTel, "otel", true, "trace with the OpenTelemetry SDK")
	f.IntVar(&spanEventLimit, "span-event-limit", 0, "set the SDK's per-span event limit explicitly (-1: unlimited; default: the SDK's, or OTEL_SPAN_EVENT_COUNT_LIMIT); recorded in the result")
	f.StringVar(&cfg.TraceOut, "trace-out", "", "write the trace to FILE in the OTLP file format (JSON lines)")
	f.StringVar(&cfg.OTLPEndpoint, "otlp-endpoint", "", "also export over OTLP/HTTP to this URL (e.g. http://localhost:4318/v1/traces)")
	f.StringVar(&cfg.SDKEventLog, "sdk-event-log", "", "append tool-call events to FILE (default: $VIGIL_SDK_EVENT_LOG)")
	f.StringVar(&resultOut, "result-out", "", "write the result line to FILE (atomically) instead of stdout")
	f.IntVar(&cfg.FailEvery, "fail-every", 0, "testing aid: fail every K-th invocation (needs --fail-counter-file)")
	f.StringVar(&cfg.FailCounterFile, "fail-counter-file", "", "testing aid: file counting invocations for --fail-every")
	return cmd
}

// failKnobFromEnv fills the failure-injection knob from the environment
// where its flags were not given.
func failKnobFromEnv(cfg *workload.Config, everySet, fileSet bool) error {
	if v := os.Getenv(workload.EnvFailEvery); v != "" && !everySet {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("%s: want an integer, got %q", workload.EnvFailEvery, v)
		}
		cfg.FailEvery = n
	}
	if v := os.Getenv(workload.EnvFailCounterFile); v != "" && !fileSet {
		cfg.FailCounterFile = v
	}
	return nil
}

func runAgent(cmd *cobra.Command, cfg workload.Config, resultOut string) error {
	// Checking --result-out now refuses an unwritable target before any
	// work is done; the file itself is written only at the end, so an
	// agent killed mid-run leaves nothing beside it.
	if resultOut != "" {
		if err := atomicfile.CheckTarget(resultOut); err != nil {
			return fmt.Errorf("--result-out %s: %v", resultOut, err)
		}
	}
	res, runErr := workload.Run(cmd.Context(), cfg)
	if runErr != nil && res.Status != wire.StatusError {
		return runErr // bad input or setup failure: exit 125, nothing written
	}
	line, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	line = append(line, '\n')
	if resultOut != "" {
		out, err := atomicfile.Open(resultOut, workload.MeasuredOutput)
		if err != nil {
			return fmt.Errorf("--result-out: %w", err)
		}
		if _, err := out.Write(line); err != nil {
			out.Abort()
			return fmt.Errorf("--result-out: %w", err)
		}
		if err := out.Commit(); err != nil {
			return fmt.Errorf("--result-out: %w", err)
		}
	} else if _, err := cmd.OutOrStdout().Write(line); err != nil {
		return fmt.Errorf("write result: %w", err)
	}
	if runErr != nil {
		fmt.Fprintln(cmd.ErrOrStderr(), "vigil agent: "+runErr.Error())
		return exitError{code: 1}
	}
	return nil
}
