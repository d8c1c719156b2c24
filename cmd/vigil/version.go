package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// versionModules are the dependencies whose versions decide what a build
// records and how it traces: the OpenTelemetry API and the eBPF loader.
var versionModules = []string{"go.opentelemetry.io/otel", "github.com/cilium/ebpf"}

var versionCmd = &cobra.Command{
	Use:   "version",
	Short: "Print vigil's version and the Go, OpenTelemetry and cilium/ebpf versions it was built with",
	Long: `version prints one line per item: vigil's own version, the Go toolchain,
and the modules OpenTelemetry (go.opentelemetry.io/otel) and cilium/ebpf as
recorded in the binary's build information ("unknown" when the binary carries
none), then the VCS revision when the build recorded one.`,
	Args: cobra.NoArgs,
	RunE: func(cmd *cobra.Command, args []string) error {
		info, _ := debug.ReadBuildInfo()
		writeVersion(cmd.OutOrStdout(), info)
		return nil
	},
}

// writeVersion prints the lines of vigil version from info, which may be
// nil (a binary built without module support).
func writeVersion(w io.Writer, info *debug.BuildInfo) {
	fmt.Fprintf(w, "vigil %s\n", version)
	goVersion := runtime.Version()
	if info != nil && info.GoVersion != "" {
		goVersion = info.GoVersion
	}
	fmt.Fprintf(w, "go %s\n", goVersion)
	for _, path := range versionModules {
		fmt.Fprintf(w, "%s %s\n", path, moduleVersion(info, path))
	}
	if info == nil {
		return
	}
	var revision, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if revision != "" {
		fmt.Fprintf(w, "revision %s%s\n", revision, modified)
	}
}

// moduleVersion is the version of module path in info, following a replace
// directive to the version actually built.
func moduleVersion(info *debug.BuildInfo, path string) string {
	if info == nil {
		return "unknown"
	}
	for _, m := range info.Deps {
		if m.Path != path {
			continue
		}
		if m.Replace != nil {
			if m.Replace.Version != "" {
				return m.Replace.Version + " (replaced by " + m.Replace.Path + ")"
			}
			return "(replaced by " + m.Replace.Path + ")"
		}
		return m.Version
	}
	return "unknown"
}

func init() { rootCmd.AddCommand(versionCmd) }
