//go:build !linux

package main

func init() {
	rootCmd.AddCommand(linuxOnlyCmd("bench [flags] [-- CMD [ARGS...]]", "Measure what each observation layer costs"))
}
