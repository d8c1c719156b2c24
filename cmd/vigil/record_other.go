//go:build !linux

package main

func init() {
	rootCmd.AddCommand(linuxOnlyCmd("record --archive FILE [flags] -- CMD [ARGS...]", "Run a command under kernel observation and write an evidence archive"))
}
