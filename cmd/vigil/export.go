package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"vigil/internal/atomicfile"
	"vigil/internal/otlpexport"
)

// ExitExportFailed is vigil export's code when the archive was read but
// not every span reached the receiver or the file.
const ExitExportFailed = 2

func init() {
	var t otlpexport.Target
	cmd := &cobra.Command{
		Use:   "export ARCHIVE (--otlp-endpoint URL | --otlp-file FILE)",
		Short: "Send an evidence archive to an OpenTelemetry backend (OTLP), joined to the workload's trace",
		Long: `export verifies ARCHIVE exactly as "vigil verify" does, turns it into
OpenTelemetry traces and sends them over OTLP/HTTP (binary protobuf) to
--otlp-endpoint, and/or writes them to --otlp-file (OTLP/JSON, one
TracesData per line).

The trace is the one vigil record started the command in (run.json
"trace"; the command got it as TRACEPARENT), so an OpenTelemetry workload's
own spans and the run's spans share one trace id:
  - the run is one span ("vigil record"), carrying health and coverage;
  - each process is a span (fork to exit: pid, program, argv, exit code)
    under the process that forked it;
  - each kernel event is a span event (open, exec, connect, ...; resolved
    path, flags, address, result): under the workload's tool-call span
    (a "kernel events" child span) when the archive's correlation puts it
    in a tool call, otherwise in its process's span.
No event is dropped to fit limits: a span holds at most
--max-events-per-span events, the rest go to "(continued)" spans under it;
a request holds at most --max-events-per-request spans and span events
together (a span never holds more than a request can). Failed, retried and
rejected requests and spans are counted and printed. Attribute names
follow the OpenTelemetry semantic conventions (process.*, file.path,
network.*, gen_ai.tool.*) and vigil.* otherwise (see the README).

Without --otlp-endpoint or --otlp-file, the endpoint comes from
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT plus
/v1/traces. An endpoint without a path gets /v1/traces.

Exit codes: 0 every span exported; 1 the archive failed verification;
2 the export failed or was incomplete (counts on stderr; a file export
still happened); 125 bad flags or the archive could not be read.`,
		Example: `  vigil export run.tar.gz --otlp-endpoint http://127.0.0.1:4318
  vigil export run.tar.gz --otlp-file run.otlp.jsonl
  OTEL_EXPORTER_OTLP_ENDPOINT=http://collector:4318 vigil export run.tar.gz`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if t.Endpoint == "" && t.File == "" {
				t.Endpoint, _ = otlpexport.EndpointFromEnv()
				if t.Endpoint == "" {
					return fmt.Errorf("nowhere to export: give --otlp-endpoint URL or --otlp-file FILE (or set OTEL_EXPORTER_OTLP_ENDPOINT)")
				}
			}
			if err := checkExportTarget(t); err != nil {
				return err
			}
			b, err := readVerified(cmd, args[0], ExitVerifyFailed)
			if err != nil {
				return err
			}
			res, err := otlpexport.Do(context.Background(), b, t)
			fmt.Fprint(cmd.ErrOrStderr(), "vigil export: "+res.Text(t))
			if err != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "vigil: %v\n", err)
				return exitError{ExitExportFailed}
			}
			return nil
		},
	}
	f := cmd.Flags()
	addExportFlags(f.StringVar, f.IntVar, f.DurationVar, &t, true)
	rootCmd.AddCommand(cmd)
}

// addExportFlags declares the export flags shared by export and record.
func addExportFlags(str func(*string, string, string, string), num func(*int, string, int, string),
	dur func(*time.Duration, string, time.Duration, string), t *otlpexport.Target, file bool) {
	str(&t.Endpoint, "otlp-endpoint", "", "send the run as OTLP/HTTP to `URL` (e.g. http://127.0.0.1:4318; /v1/traces is added to a URL without a path)")
	if file {
		str(&t.File, "otlp-file", "", "write the run as OTLP/JSON lines to `FILE` (replaced atomically)")
	}
	num(&t.MaxEventsPerSpan, "max-events-per-span", otlpexport.DefaultMaxEventsPerSpan, "at most `N` kernel events in one span; more continue in child spans")
	num(&t.MaxEventsPerRequest, "max-events-per-request", otlpexport.DefaultMaxEventsPerRequest, "at most `N` spans plus span events in one OTLP request")
	dur(&t.Timeout, "otlp-timeout", 10*time.Second, "time limit for each OTLP request attempt (5 attempts for retryable failures)")
}

// checkExportTarget refuses bad export flags before any work is done.
func checkExportTarget(t otlpexport.Target) error {
	if t.Endpoint != "" {
		if _, err := otlpexport.ParseEndpoint(t.Endpoint); err != nil {
			return fmt.Errorf("--otlp-endpoint %v", err)
		}
	}
	if t.MaxEventsPerSpan < 1 {
		return fmt.Errorf("--max-events-per-span %d: must be >= 1", t.MaxEventsPerSpan)
	}
	if t.MaxEventsPerRequest < 2 {
		return fmt.Errorf("--max-events-per-request %d: must be >= 2 (a span and one event)", t.MaxEventsPerRequest)
	}
	if t.Timeout <= 0 {
		return fmt.Errorf("--otlp-timeout %v: must be > 0", t.Timeout)
	}
	if t.File != "" {
		if err := atomicfile.CheckTarget(t.File); err != nil {
			return fmt.Errorf("--otlp-file %s: %v", t.File, err)
		}
	}
	return nil
}
