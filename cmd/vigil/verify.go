package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"vigil/internal/archive"
	"vigil/internal/attest"
	"vigil/internal/evidence"
)

// ExitVerifyFailed is the exit code of verify and inspect when an archive
// was read but failed verification.
const ExitVerifyFailed = 1

var verifyCmd = &cobra.Command{
	Use:   "verify ARCHIVE...",
	Short: "Check evidence archives: hashes, schemas, cross-file consistency",
	Long: `verify checks each archive completely: gzip and tar structure (one gzip
member, regular files only, no path escapes, no duplicate, unexpected,
missing or oversized entries), manifest.json first and every other entry's
sha256 and size against it, every entry against its JSON Schema (NDJSON line
by line), canonical encoding, and cross-file consistency (one run id
everywhere; health counts equal to the kernel layer; health verdicts such as
kernel_layer "complete" implied by the recorded drops (per kind and cause),
decode errors, read faults, skipped probe runs, probes, drain and cgroup
correlation; capability surface and correlation report
equal to what the layers derive).

Limits: one entry at most 1 GiB uncompressed (manifest.json 1 MiB), the
whole archive at most 2 GiB uncompressed, one NDJSON line at most 1 MiB.
Nothing is inflated on trust: manifest.json is checked first, an entry
whose tar header disagrees with the size manifest.json declares is refused
before its data is read, and NDJSON lines are validated as they arrive, so
a crafted archive (a decompression bomb, a flood of tiny lines) fails at
its first bad piece, not after inflating all of it.

Memory: verify holds neither the kernel layer's events nor, once they
are many, the paths the layer derives. The surface's text, the time index
correlation needs (9-17 bytes per event) and the paths past 65,536 (or 4 MiB
of them) go to a scratch file without a name in the temporary directory
($TMPDIR, else /tmp), and the surface is compared by sha256 of the
derived text. Where no scratch file can be made or written, they are
held in memory instead.

Signatures: a signed archive (vigil record --sign-key) carries
signature.dsse.json, a DSSE envelope over an in-toto statement that names
manifest.json and every entry by sha256. verify always checks that the
statement names exactly the archive's entries (so an archive edited and
re-hashed after signing fails). With --pubkey it also requires that the
archive is signed and that the key made the signature; without it the
signature is reported as unchecked.

Prints "ok: RUN_ID ARCHIVE ... signature=S" per good archive on stdout,
S being unsigned, unchecked:KEYID or verified:KEYID. For a bad one it
prints one line "vigil: ARCHIVE: ENTRY: what is wrong" on stderr.

Every archive given is checked, whatever the ones before it gave. Exit
codes: 0 all archives verified; 1 an archive failed verification; 125 an
archive could not be read at all (missing, unreadable), or vigil's
scratch file failed.`,
	Args: cobra.MinimumNArgs(1),
	RunE: func(cmd *cobra.Command, args []string) error {
		// The collector keeps its default pacing: an archive is checked
		// without holding its events, so nearly everything read is
		// garbage within a batch (turning collection off grew the peak
		// by half, for no time saved).
		var key *attest.Key
		if verifyPubkey != "" {
			var err error
			if key, err = attest.LoadKey(verifyPubkey); err != nil {
				return fmt.Errorf("--pubkey %v", err)
			}
		}
		// Every archive is checked, whatever the ones before it gave;
		// the exit code is the worst: unreadable, then failed.
		failed, unreadable := false, false
		for _, path := range args {
			a, err := openVerified(path, key)
			if err != nil {
				if !isVerifyFailure(err) {
					unreadable = true
					fmt.Fprintf(cmd.ErrOrStderr(), "vigil: %s\n", unreadableText(path, err))
					continue
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "vigil: %s: %v\n", path, err)
				failed = true
				continue
			}
			b := a.Bundle
			h := b.Health
			var misses uint64
			for _, n := range h.ProgramMisses {
				misses += n
			}
			unrecorded := ""
			if n := b.Unrecorded(); n > 0 {
				// Complete as captured, yet actions a reader cannot see.
				unrecorded = fmt.Sprintf(" unrecorded=%d", n)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "ok: %s %s kernel_layer=%s cgroup_correlation=%s sdk_layer=%s events=%d ringbuf_drops=%d read_faults=%d program_misses=%d%s signature=%s\n",
				b.Run.RunID, path, h.KernelLayer.Status, h.CgroupCorrelation.Status, h.SDKLayer.Status, b.Events(), h.RingbufDrops.Total, h.ReadFaults, misses, unrecorded, signatureStatus(a, key))
		}
		switch {
		case unreadable:
			return exitError{ExitRunnerFailure}
		case failed:
			return exitError{ExitVerifyFailed}
		}
		return nil
	},
}

// openVerified checks the archive at path (and its signature, with key)
// and returns it, keeping only the verdict and the documents' counts.
func openVerified(path string, key *attest.Key) (*archive.Archive, error) {
	if err := checkArchiveFile(path); err != nil {
		return nil, err
	}
	a, err := archive.OpenDigest(path)
	if err != nil {
		return nil, err
	}
	a.Close()
	if key != nil {
		if err := a.VerifySignature(key); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// unreadableText is "PATH: what is wrong" for an archive that could not
// be read, naming the path once.
func unreadableText(path string, err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == path {
		return path + ": " + pe.Err.Error()
	}
	if strings.HasPrefix(err.Error(), path+":") {
		return err.Error()
	}
	return path + ": " + err.Error()
}

// signatureStatus is how verify reports a good archive's signature:
// "verified:KEYID" when checked against --pubkey, "unchecked:KEYID" for
// a well-formed signature no key was given for, "unsigned" for none.
func signatureStatus(a *archive.Archive, key *attest.Key) string {
	switch {
	case a.Signature == nil:
		return "unsigned"
	case key != nil:
		return "verified:" + key.ID()
	default:
		return "unchecked:" + strings.Join(a.Signature.KeyIDs(), ",")
	}
}

// checkArchiveFile rejects a path that cannot be an archive at all (a
// directory, a device), which is an input error (exit 125), not an
// archive that failed verification.
func checkArchiveFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			// "ARCHIVE: no such file or directory", as the other
			// commands say it, not "stat ARCHIVE: ...".
			return fmt.Errorf("%s: %w", path, pe.Err)
		}
		return err
	}
	if !st.Mode().IsRegular() {
		if st.IsDir() {
			return fmt.Errorf("%s: is a directory, not an archive", path)
		}
		return fmt.Errorf("%s: is not a regular file", path)
	}
	return nil
}

// isVerifyFailure tells a defect in the archive (exit 1) from failing to
// read the file at all (exit 125).
func isVerifyFailure(err error) bool {
	var ee *evidence.EntryError
	return errors.As(err, &ee)
}

var verifyPubkey string

func init() {
	verifyCmd.Flags().StringVar(&verifyPubkey, "pubkey", "", "require a signature by the ed25519 key in `FILE` (PEM public or private key; see vigil keygen)")
	rootCmd.AddCommand(verifyCmd)
}
