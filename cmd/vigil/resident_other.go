//go:build !linux

package main

func init() {
	rootCmd.AddCommand(linuxOnlyCmd("resident load|status|unload", "Keep the capture programs loaded between records, so each record starts faster"))
}
