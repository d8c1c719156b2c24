//go:build linux

package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"vigil/internal/archive"
	"vigil/internal/atomicfile"
	"vigil/internal/evidence"
	"vigil/internal/spill"
	"vigil/internal/wire"
)

// prepareSDKLog creates the file the child writes SDK events to: the
// --sdk-event-log path truncated, or a private temporary file.
func (r *run) prepareSDKLog() (string, error) {
	if p := r.o.SDKEventLogPath; p != "" {
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return "", fail("--sdk-event-log %s: %v", p, err)
		}
		if err := r.giveToChild(f); err != nil {
			f.Close()
			return "", fail("--sdk-event-log %s: %v", p, err)
		}
		return p, f.Close()
	}
	// The pid in the name lets a later run remove the file when this one
	// is killed before it can (removeStaleSDKLogs); the lock held for the
	// whole run keeps a vigil that cannot see this pid (another PID
	// namespace sharing the directory) from taking the file for stale.
	f, err := os.CreateTemp("", fmt.Sprintf("vigil-sdk-%d-%s-*.ndjson", os.Getpid(), r.o.RunID))
	if err != nil {
		return "", fail("creating the SDK event log: %v", err)
	}
	r.sdkTemp = f.Name()
	if err := r.giveToChild(f); err != nil {
		f.Close()
		return "", fail("creating the SDK event log: %v", err)
	}
	if err := lockInUse(f); err != nil {
		f.Close()
		return "", fail("locking the SDK event log: %v", err)
	}
	r.sdkLock = f
	return f.Name(), nil
}

// lockInUse marks f as in use for as long as it stays open: an open file
// description read lock (fcntl F_OFD_SETLK), which the workload's own
// flock of the log does not interact with.
func lockInUse(f *os.File) error {
	lk := unix.Flock_t{Type: unix.F_RDLCK}
	return unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
}

// inUse reports whether some open file description holds lockInUse's
// lock on path; a file it cannot open to test counts as in use.
func inUse(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return true
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK}
	return unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk) != nil
}

// giveToChild makes f the --user child's, so that it can write it.
func (r *run) giveToChild(f *os.File) error {
	if c := r.o.cred; c != nil {
		return f.Chown(int(c.Uid), int(c.Gid))
	}
	return nil
}

// readSDKLog ingests the SDK log strictly. An empty log means the
// workload reported nothing (no SDK layer).
func readSDKLog(path, runID string) ([]wire.SDK, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the SDK event log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("reading the SDK event log: %w", err)
	}
	if st.Size() == 0 {
		return nil, nil, nil
	}
	ev, problems := evidence.ReadSDKLog(f, runID)
	return ev, problems, nil
}

// writeArchive writes the bundle next to its destination and renames it
// into place, so the archive path only ever holds a complete archive (the
// writer may be any ArchiveWriter, atomic or not).
func (r *run) writeArchive(b *evidence.Bundle, layer *archive.KernelLayer) error {
	write := r.o.WriteArchive
	if write == nil {
		write = archiveWriter(r.o.SignKey)
	}
	dst := r.o.ArchivePath
	r.archiveTmp = archiveTempName(dst, os.Getpid(), r.o.RunID)
	if err := write(r.archiveTmp, b, layer); err != nil {
		// Name the destination, not the temporary name it was written under.
		return fail("writing archive %s: %s", dst, strings.TrimPrefix(err.Error(), r.archiveTmp+": "))
	}
	if err := atomicfile.Rename(r.archiveTmp, dst); err != nil {
		return fail("writing archive %s: %v", dst, err)
	}
	r.archiveTmp = ""
	return nil
}

// writeJSONAtomic writes v as indented JSON via a temporary file.
func writeJSONAtomic(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'))
}

// archiveTempName is where the archive for dst is written before the
// rename: hidden beside it, named with the writing vigil's pid so that a
// later vigil can tell a leftover of a killed one from a write in
// progress. archive.Write adds its own ".tmp-*" file beside this name.
func archiveTempName(dst string, pid int, runID string) string {
	return filepath.Join(filepath.Dir(dst), fmt.Sprintf(".%s.tmp-%d-%s", filepath.Base(dst), pid, runID))
}

// removeStaleTemps removes temporary archive files beside dst left by a
// vigil that was killed while writing (its pid is gone), and scratch
// files one was killed creating (see spill.NamePattern); a file whose
// writer may still run is kept. It returns the names removed.
func removeStaleTemps(dst string) []string {
	dir, base := filepath.Dir(dst), filepath.Base(dst)
	removed := removeStale(dir, regexp.MustCompile(`^\.{1,2}`+regexp.QuoteMeta(base)+`\.tmp-([0-9]+)-`))
	return append(removed, removeStale(dir, spill.NamePattern)...)
}

// staleSDKLog matches the private SDK logs of prepareSDKLog; compiled on
// first use, as only vigil record needs it.
var staleSDKLog = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^vigil-sdk-([0-9]+)-.*\.ndjson$`)
})

// removeStaleSDKLogs removes private SDK logs in dir (the temporary
// directory) left by a vigil that was killed before it could remove its
// own. It returns the names removed.
func removeStaleSDKLogs(dir string) []string {
	return removeStaleIf(dir, staleSDKLog(), func(path string) bool { return !inUse(path) })
}

// removeStale removes the regular files in dir whose name matches re,
// with re's first group the pid of the vigil that wrote them, when that
// process is gone.
func removeStale(dir string, re *regexp.Regexp) []string {
	return removeStaleIf(dir, re, func(string) bool { return true })
}

// removeStaleIf is removeStale for the files that also pass ok.
func removeStaleIf(dir string, re *regexp.Regexp, ok func(path string) bool) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range ents {
		m := re.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == os.Getpid() || pidAlive(pid) || !ok(filepath.Join(dir, e.Name())) {
			continue
		}
		if os.Remove(filepath.Join(dir, e.Name())) == nil {
			removed = append(removed, e.Name())
		}
	}
	return removed
}

// pidAlive: a process with this pid exists (EPERM means it does).
func pidAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}
