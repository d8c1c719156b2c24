//go:build linux

package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"vigil/internal/capture"
)

func init() {
	var dir string
	cmd := &cobra.Command{
		Use:   "resident load|status|unload",
		Short: "Keep the capture programs loaded between records, so each record starts faster (root)",
		Long: `resident keeps vigil's capture programs loaded and verified between runs: a
resident set, pinned in a BPF file system. A record that finds this binary's
set takes it instead of loading its programs, which skips parsing the
kernel's type information and the kernel's verifier: most of what record
costs before the command starts. Nothing runs in the background and nothing
is attached between records: tasks outside a record pay nothing for a set.

  load     load this binary's set for --ring-size and pin it in --resident-dir
           (mounting a BPF file system on /sys/fs/bpf when none is, and
           saying so; unload leaves it mounted)
  status   list the sets there: whether this binary made it, whether a
           record holds it now (its programs attached), its programs
  unload   unpin every set there; one a record holds is left (unload again
           once it ends). Nothing else in the directory is touched

A set is this binary's: another vigil build (or one that fills in other
syscall tables) has a set of another name, and never takes this one. One
record at a time holds a set (an exclusive lock on its directory, released
once its programs are detached); a record that finds it held loads its own
programs, and run.json's capture_programs says which happened and why. A
record resets what the programs keep for a session before it attaches them,
discards (and counts) records a holder killed mid-run left in the ring,
tells an earlier session's tasks still alive from its own, and refuses a
record begun for an earlier session.

A set keeps its ring buffer (8 MiB by default) and programs in kernel
memory until it is unloaded or the host reboots.

Exit codes:
  0    done (load: loaded, or already there; unload: every set unloaded,
       or none there)
  125  bad flags, missing privileges, a directory not on a BPF file
       system, or (unload) a set held by a running record, which is left
       while the others are unloaded

A set is trusted as the vigil binary is: whoever can write to the BPF file
system (root) could replace it, as they could replace vigil.`,
		Example: `  vigil resident load
  vigil record --archive run.tar.gz -- ./agent    # takes the set
  vigil resident status
  vigil resident unload`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("resident: unknown subcommand %q; want load, status or unload", args[0])
			}
			return cmd.Help()
		},
	}
	cmd.PersistentFlags().StringVar(&dir, "resident-dir", capture.DefaultResidentDir, "`DIR` of resident sets (a directory on a BPF file system)")

	var ringSize string
	load := &cobra.Command{
		Use:   "load",
		Short: "Load and pin this binary's capture programs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			n, err := parseRingSize(ringSize)
			if err != nil {
				return err
			}
			if err := capture.CheckRingSize(n); err != nil {
				return fmt.Errorf("--ring-size %s: %v", ringSize, err)
			}
			start := time.Now()
			res, err := capture.LoadResident(dir, n)
			if res.Mounted != "" {
				fmt.Fprintf(cmd.OutOrStdout(), "mounted a BPF file system on %s (unload leaves it; umount %s once nothing uses it)\n", res.Mounted, res.Mounted)
			}
			if err != nil {
				return err
			}
			set := res.Set
			switch {
			case res.Already:
				fmt.Fprintf(cmd.OutOrStdout(), "%s: already loaded (%s)\n", set.Name, set.Dir)
			case res.Replaced:
				fmt.Fprintf(cmd.OutOrStdout(), "%s: was incomplete; loaded again in %s (%s; programs %s)\n", set.Name, time.Since(start).Round(time.Millisecond), set.Dir, strings.Join(set.Programs, " "))
			default:
				fmt.Fprintf(cmd.OutOrStdout(), "%s: loaded in %s (%s; programs %s)\n", set.Name, time.Since(start).Round(time.Millisecond), set.Dir, strings.Join(set.Programs, " "))
			}
			return nil
		},
	}
	load.Flags().StringVar(&ringSize, "ring-size", "", "ring-buffer size of the set, `SIZE` in bytes or e.g. 1MiB (a record takes the set of its own --ring-size)")

	status := &cobra.Command{
		Use:   "status",
		Short: "List the resident sets",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sets, err := capture.ListResident(dir)
			if err != nil {
				return err
			}
			if len(sets) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "no resident set in %s\n", dir)
				return nil
			}
			for _, s := range sets {
				made := "another vigil build's"
				if s.Current {
					made = "this binary's"
				}
				held := "free"
				if s.Busy {
					held = "held by a record"
				}
				switch {
				case !s.Complete && s.Current:
					held += ", incomplete (records refuse it; vigil resident load replaces it)"
				case !s.Complete:
					held += ", incomplete (vigil resident unload removes it)"
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: %s, %s, loaded %s, programs %s\n", s.Name, made, held, s.LoadedAt.UTC().Format(time.RFC3339), strings.Join(s.Programs, " "))
			}
			return nil
		},
	}
	unload := &cobra.Command{
		Use:   "unload",
		Short: "Unpin every resident set",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			removed, err := capture.UnloadResident(dir)
			for _, r := range removed {
				fmt.Fprintf(cmd.OutOrStdout(), "%s: unloaded\n", r)
			}
			if err == nil && len(removed) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "no resident set in %s\n", dir)
			}
			return err
		},
	}
	cmd.AddCommand(load, status, unload)
	rootCmd.AddCommand(cmd)
}
