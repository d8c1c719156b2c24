package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"vigil/internal/atomicfile"
	"vigil/internal/evidence"
	"vigil/internal/gcpace"
	"vigil/internal/runpage"
)

var inspectFlags struct {
	json bool
	top  int
	html string
}

var inspectCmd = &cobra.Command{
	Use:   "inspect ARCHIVE",
	Short: "Summarize an evidence archive (health, counts, paths, execs, network, tool calls)",
	Long: `inspect verifies the archive exactly as "vigil verify" does, then prints a
summary: observation health with its reasons, events per kind, what the run
changed in the file system (the first --top paths of each list: created,
deleted, renamed, directories, links, modes, truncated, written), the most
opened paths, executed programs, network endpoints and, when the workload
reported them, its tool calls with the kernel events inside each.

--json prints one JSON object instead (schema "inspect", id vigil.inspect/v2:
run fields, capture_programs, the archive's observation-health.json
unchanged under "health", total_events, top_paths [{path, opens}],
distinct_paths, files_read, files_written, files_created, open_failures,
files_deleted, execs, network, network_sent, network_local, tool_calls
[{tool_call_id, tool_name, status, completed, duration_ns, kernel_events,
by_kind}], unattributed_events, and when there are any: changes [{list,
total, paths}], incomplete_events [{seq, kind, pid, comm, parts}] and
unrecorded {operation: count}, the events that acted on files or addresses
the record does not name, such as io_uring operations whose arguments the
capture does not decode).

--html FILE also writes one self-contained page for the run (no external
assets, opens offline in any browser): a health and coverage banner, a
timeline of processes, tool calls and event density, filterable tables of
files, programs and network endpoints, and each tool call with the kernel
events inside it. In a browser, the address file:///…/FILE#files=QUERY
opens it with the files table filtered (also #procs=, #execs=, #endpoints=).

Exit codes: 0 ok; 1 the archive failed verification (not a vigil archive,
or one that does not verify; one line on stderr naming the entry); 125 the
archive could not be opened, or bad flags.`,
	Args: cobra.ExactArgs(1),
	RunE: func(cmd *cobra.Command, args []string) error {
		gcpace.OneShot()
		if inspectFlags.top < 0 {
			return fmt.Errorf("--top %d: must be >= 0", inspectFlags.top)
		}
		b, err := readVerified(cmd, args[0], ExitVerifyFailed)
		if err != nil {
			return err
		}
		if inspectFlags.html != "" {
			var page bytes.Buffer
			if err := runpage.Write(&page, runpage.Build(args[0], b)); err != nil {
				return err
			}
			if err := atomicfile.Write(inspectFlags.html, page.Bytes()); err != nil {
				return fmt.Errorf("--html: %v", err)
			}
		}
		s := evidence.Summarize(b, inspectFlags.top)
		out := cmd.OutOrStdout()
		if inspectFlags.json {
			enc := json.NewEncoder(out)
			enc.SetIndent("", "  ")
			return enc.Encode(s)
		}
		_, err = fmt.Fprint(out, s.Text())
		return err
	},
}

func init() {
	inspectCmd.Flags().BoolVar(&inspectFlags.json, "json", false, "print one JSON object (schema vigil.inspect/v2) instead of text")
	inspectCmd.Flags().StringVar(&inspectFlags.html, "html", "", "also write a self-contained HTML page for the run to FILE")
	inspectCmd.Flags().IntVar(&inspectFlags.top, "top", 10, "how many paths to list: of the most opened, of each list of changes, of the incomplete events")
	rootCmd.AddCommand(inspectCmd)
}
