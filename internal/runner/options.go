//go:build linux

package runner

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"vigil/internal/atomicfile"
	"vigil/internal/attest"
	"vigil/internal/capture"
	"vigil/internal/limits"
)

// DefaultGrace is how long processes left in the session after the main
// child exited get to finish on their own before they are killed. It costs
// nothing when the session empties with the child, which is the common case.
const DefaultGrace = 2 * time.Second

// DefaultRingSize is the capture's ring-buffer size when Options.RingSize
// is 0.
const DefaultRingSize = capture.DefaultRingSize

// Options configure one recorded run.
type Options struct {
	// Argv is the command to run; Argv[0] is looked up in PATH.
	Argv []string
	// ArchivePath is where the archive is written (required). The
	// directory must exist and be writable; the file appears atomically.
	ArchivePath string
	// RingSize is the ring-buffer size in bytes; 0 means the capture
	// default.
	RingSize int
	// Grace is the straggler grace period after the main child exited.
	Grace time.Duration
	// PhaseLogPath, when set, receives the PhaseLog as JSON.
	PhaseLogPath string
	// SDKEventLogPath is where the child writes its SDK events; it is
	// created empty (truncated) before the child starts. When empty, a
	// private temporary file is used and removed afterwards.
	SDKEventLogPath string
	// AllowAbsentKernel records without kernel capture when capture is
	// unavailable; the archive then says kernel_layer absent and why.
	AllowAbsentKernel bool
	// RunID is the run id; empty means 16 random hex characters.
	RunID string
	// VigilVersion goes into run.json.
	VigilVersion string

	// Stdin, Stdout and Stderr are handed to the child as they are (nil
	// means os.Stdin, os.Stdout, os.Stderr). They are files, not
	// io.Writers, so no copying goroutine ties vigil's exit to a
	// descendant that keeps a pipe open.
	Stdin, Stdout, Stderr *os.File
	// Log receives vigil's own one-line notices; nil discards them.
	Log io.Writer

	// Programs says whether the eBPF capture may take a resident set
	// (vigil resident load) from ResidentDir (empty: the default)
	// instead of loading its programs for this run.
	Programs    capture.ResidentMode
	ResidentDir string

	// Backend is the kernel capture; nil means the eBPF capture.
	Backend Backend
	// WriteArchive writes the archive; nil means the archive package.
	WriteArchive ArchiveWriter
	// SignKey, when set, signs the archive (package attest); it must hold
	// the private key.
	SignKey *attest.Key
	// User, when set, is who the command runs as: NAME, UID, NAME:GROUP
	// or UID:GID (vigil keeps its own privileges).
	User string

	// Limits cap the command's process tree (package limits).
	Limits limits.Spec
	// ChildCPUs pins the command's tree and RunnerCPUs vigil itself
	// (package affinity); nil leaves the mask as inherited. With only
	// RunnerCPUs set, the command keeps vigil's original mask.
	ChildCPUs, RunnerCPUs *unix.CPUSet

	cred *syscall.Credential // User resolved by validate
}

// runIDPattern is compiled on first use: the counted repetition makes it
// costly to compile, and only vigil record needs it.
var runIDPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9_.]{1,64}$`)
})

// newRunID returns 16 random hex characters.
func newRunID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// validate checks everything that can be checked without privileges and
// resolves the command. It creates nothing that outlives it.
func (o *Options) validate() (path string, err error) {
	if len(o.Argv) == 0 || o.Argv[0] == "" {
		return "", fail("no command given (usage: vigil record [flags] -- CMD [ARGS...])")
	}
	if o.ArchivePath == "" {
		return "", fail("--archive is required")
	}
	for i, a := range o.Argv {
		// run.json records the command line as JSON strings, which cannot
		// hold it byte for byte; refuse rather than archive a different
		// command.
		if !utf8.ValidString(a) {
			return "", fail("command argument %d (%q) is not valid UTF-8; run.json could not record it exactly", i, a)
		}
	}
	if o.RunID == "" {
		if o.RunID, err = newRunID(); err != nil {
			return "", fail("generating run id: %v", err)
		}
	} else if !runIDPattern().MatchString(o.RunID) {
		return "", fail("--run-id %q: want 1-64 characters of [A-Za-z0-9_.]", o.RunID)
	}
	if o.Grace < 0 {
		return "", fail("--grace %v: must not be negative", o.Grace)
	}
	if err := o.Limits.Check(); err != nil {
		return "", fail("%v", err)
	}
	if o.RingSize < 0 {
		return "", fail("--ring-size %d: must not be negative", o.RingSize)
	}
	// A bad size is the caller's mistake, not an absent kernel layer:
	// refuse it here, before --allow-absent-kernel could record without
	// capture because Open rejected it.
	if err := capture.CheckRingSize(o.RingSize); err != nil {
		return "", fail("--ring-size %d: %v", o.RingSize, err)
	}
	if err := checkWritableDir("--archive", o.ArchivePath); err != nil {
		return "", err
	}
	if o.User != "" {
		if o.cred, err = resolveUser(o.User); err != nil {
			return "", fail("%v", err)
		}
		if err := checkCanSwitch(); err != nil {
			return "", fail("%v", err)
		}
	}
	if o.SignKey != nil && !o.SignKey.CanSign() {
		return "", fail("--sign-key: a public key cannot sign; give the private key (vigil keygen writes NAME.key)")
	}
	if o.PhaseLogPath != "" {
		if err := checkWritableDir("--phase-log", o.PhaseLogPath); err != nil {
			return "", err
		}
	}
	if o.SDKEventLogPath != "" {
		if err := checkWritableDir("--sdk-event-log", o.SDKEventLogPath); err != nil {
			return "", err
		}
	}
	return lookCommand(o.Argv[0])
}

// checkWritableDir checks that a file can be created next to path (and
// that path is not a directory), before anything runs. access(2) also
// reports a read-only file system; running out of space is caught by the
// atomic write itself, which never leaves a partial file.
func checkWritableDir(flag, path string) error {
	if err := atomicfile.CheckTarget(path); err != nil {
		return fail("%s %s: %v", flag, path, err)
	}
	return nil
}

// lookCommand resolves argv[0] the way a shell would, mapping failures to
// the shell's exit codes: 127 not found, 126 found but not executable.
func lookCommand(name string) (string, error) {
	path, err := exec.LookPath(name)
	if err == nil || errors.Is(err, exec.ErrDot) {
		if st, serr := os.Stat(path); serr == nil && st.IsDir() {
			return "", failCode(ExitCannotExecute, "command %q is a directory", name)
		}
		return path, nil
	}
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, fs.ErrNotExist) {
		return "", failCode(ExitNotFound, "command %q not found", name)
	}
	var ee *exec.Error
	if errors.As(err, &ee) {
		err = ee.Err
	}
	return "", failCode(ExitCannotExecute, "command %q cannot be executed: %v", name, err)
}

func (o *Options) defaults() {
	if o.Stdin == nil {
		o.Stdin = os.Stdin
	}
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
}

func (o *Options) logf(format string, a ...any) {
	fmt.Fprintf(o.Log, "vigil: "+format+"\n", a...)
}
