package main

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"vigil/internal/gcpace"
	"vigil/internal/policy"
)

var checkFlags struct {
	policy string
	format string
}

var checkCmd = &cobra.Command{
	Use:   "check --policy FILE ARCHIVE",
	Short: "Judge a run against a policy of allowed files, programs and endpoints",
	Long: `check verifies the archive as "vigil verify" does, then judges every action
of the run (each open for read or write, create, delete, mkdir, rename,
link, chmod, chown, truncate, exec, connect, send, bind, listen) against a
policy, and reports each violation with the event sequence numbers, the
process and the tool call behind it and the rule that matched.

A policy is YAML or JSON (schema "policy", id vigil.policy/v1):

  schema: vigil.policy/v1
  default: deny                # the decision when no rule matches
  attempts: false              # true: also judge calls that failed
  rules:                       # tried in order; the first match decides
    - name: workspace
      action: allow
      ops: [read, write, create, delete, mkdir, rename]   # absent: all
      paths: ["/tmp/vigil-agent-*/**"]     # globs: *, **, {a,b}, [..]
    - name: libraries
      action: allow
      ops: [read]
      paths: ["/etc/ld.so.cache", "/{usr/,}lib{,64}/**", "/proc/**"]
    - name: collector
      action: allow
      ops: [connect]
      endpoints: ["127.0.0.1:4318", "[::1]:4318"]  # ADDR|CIDR|*:PORT|N-M|*, unix:GLOB
    - name: only-in-tools
      action: deny
      ops: [exec]
      tool: read_file            # only actions inside this tool's calls

A rule without paths or endpoints matches every object of its ops; with
only paths it never matches a network operation, with only endpoints never
a file operation. Paths are the kernel's resolved paths where it resolved
one (see capability-surface in the README); a rename is judged on both
names. YAML reads unquoted y, n, yes, no, on and off as booleans: quote
such names.

A record that is not complete for the policy (kernel layer not complete,
cgroup correlation not clean, an operation class the policy could deny not
covered on this host, events that may have done what the policy denies on
objects the record does not name, such as io_uring requests whose
arguments are not recorded, or tool-scoped rules without a complete SDK
layer) cannot pass: with no violation the result is "incomplete", "no
violation seen in an incomplete record".

--format text (default), json (schema "policy-check", id
vigil.policy-check/v1) or sarif (SARIF 2.1.0, one result per violation, for
code-scanning tools).

Exit codes: 0 pass; 1 violations; 2 the archive failed verification;
3 no violation seen but the record is incomplete; 125 bad flags, a bad
policy (one line naming the file and what is wrong) or an unreadable
archive.`,
	Args: cobra.ExactArgs(1),
	RunE: func(cmd *cobra.Command, args []string) error {
		gcpace.OneShot()
		if checkFlags.policy == "" {
			return errors.New("--policy FILE is required")
		}
		switch checkFlags.format {
		case "text", "json", "sarif":
		default:
			return fmt.Errorf("--format %q: want text, json or sarif", checkFlags.format)
		}
		p, err := policy.Load(checkFlags.policy)
		if err != nil {
			return err
		}
		b, err := readVerified(cmd, args[0], ExitArchiveInvalid)
		if err != nil {
			return err
		}
		r := policy.Check(b, p)
		out := cmd.OutOrStdout()
		switch checkFlags.format {
		case "text":
			_, err = fmt.Fprint(out, r.Text())
		case "json":
			err = writeJSON(out, r)
		case "sarif":
			err = writeJSON(out, r.SARIF(p, version))
		}
		if err != nil {
			return err
		}
		switch r.Status {
		case policy.StatusFail:
			return exitError{1}
		case policy.StatusIncomplete:
			return exitError{ExitCheckIncomplete}
		}
		return nil
	},
}

func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // "=>" and "<" stay readable
	return enc.Encode(v)
}

func init() {
	checkCmd.Flags().StringVar(&checkFlags.policy, "policy", "", "the policy file (YAML or JSON, schema vigil.policy/v1)")
	checkCmd.Flags().StringVar(&checkFlags.format, "format", "text", "output format: text, json or sarif")
	rootCmd.AddCommand(checkCmd)
}
