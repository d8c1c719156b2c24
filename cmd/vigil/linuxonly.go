package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

// linuxOnlyCmd stands in for a command that needs Linux (cgroup v2, eBPF,
// Linux scheduling and process control) on a system without it: it is
// listed, and refuses at once with one line and exit 125, whatever its
// arguments, so a script learns why instead of meeting an unknown command.
func linuxOnlyCmd(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:                use,
		Short:              short + " (Linux only)",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return fmt.Errorf("%s is Linux only (this is %s/%s)", cmd.Name(), runtime.GOOS, runtime.GOARCH)
		},
	}
}
