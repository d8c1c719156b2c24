//go:build linux

package capture

import (
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// A resident set is the capture programs and the maps user space needs,
// loaded and verified once and pinned in a BPF file system, so that a
// capture can skip what costs most in Open: parsing the object and the
// kernel's BTF, and the verifier. Programs are attached only while a
// capture holds the set, so tasks outside any session pay nothing between
// captures, exactly as without a set.
//
// This file names sets; residentdir.go loads, lists and unloads them;
// residenttake.go is a capture taking one. One capture at a time holds a
// set: it takes an exclusive flock on the set's directory, and a capture
// that finds it held loads its own programs instead. Everything a session
// sets or counts is reset when a capture takes the set (struct
// vigil_session, the counters, records an earlier holder left in the
// ring); tracked-task entries an earlier session left on tasks still
// alive, and records begun for it, are told apart by the session's
// generation.
//
// A set is named after everything that decides what its programs do (the
// BPF object, what the loader fills in, the binary's build ID) and the
// ring size, so another vigil build never uses it. Whoever can write the
// BPF file system can replace a set, as they could replace vigil itself or
// load any program; the set is trusted as the binary is.

// DefaultResidentDir is where resident sets are pinned by default.
const DefaultResidentDir = "/sys/fs/bpf/vigil"

// ResidentMode says whether Open may take a resident set.
type ResidentMode int

const (
	// ResidentOff loads the programs for this capture.
	ResidentOff ResidentMode = iota
	// ResidentAuto takes this binary's resident set when there is one
	// and no other capture holds it; otherwise it loads the programs.
	ResidentAuto
	// ResidentRequire takes the resident set or fails.
	ResidentRequire
)

// ErrNoResident is returned (wrapped) by Open with ResidentRequire when the
// resident set cannot be taken.
var ErrNoResident = errors.New("resident set unavailable")

// errResidentAbsent: there is no set to take, which for ResidentAuto is
// no fallback.
var errResidentAbsent = errors.New("no resident set")

// Pin names inside a set's directory.
const (
	pinEvents   = "map_events"
	pinCounters = "map_counters"
	pinSession  = "map_session"
	pinProg     = "prog_"
	loadingDir  = "loading-" // bpffs refuses names with a dot
)

// ProgramSource says where a capture's programs came from.
type ProgramSource struct {
	// Resident is true when the programs are a resident set's.
	Resident bool
	// Set names the resident set (Resident), or the one asked for.
	Set string
	// Fallback says why a resident set that was there was not used
	// (ResidentAuto); empty when it was used, absent, or not asked for.
	Fallback string
	// StaleRecords counts records an earlier holder of the set left in
	// its ring (it died before reading them); they were discarded before
	// this capture's programs were attached.
	StaleRecords uint64
}

// setName names the set of this binary for a ring of size bytes: a hash
// of everything else that decides what the pinned programs do
// (loaderIdentity), the same for every ring size, and the ring size.
func setName(size uint32) string {
	return fmt.Sprintf("%s-%s", hex.EncodeToString(loaderIdentity()[:8]), sizeName(size))
}

// isSetName reports whether name is a set's (16 lowercase hex digits, a
// dash, a ring size); anything else in a resident directory is not
// vigil's, and is left alone.
func isSetName(name string) bool {
	hash, size, ok := strings.Cut(name, "-")
	if !ok || len(hash) != 16 || strings.Trim(hash, "0123456789abcdef") != "" {
		return false
	}
	size = strings.TrimSuffix(strings.TrimSuffix(size, "KiB"), "MiB")
	return size != "" && strings.Trim(size, "0123456789") == ""
}

// loaderIdentity is what a set's programs depend on besides the ring
// size: the BPF object, what the loader fills in (the syscall tables, the
// wakeup threshold) and, standing for the loader code itself (the CO-RE
// projection, cilium/ebpf), the Go build ID of the running binary. A vigil
// that differs in any of them never takes the set.
var loaderIdentity = sync.OnceValue(func() []byte {
	return identityOf(_VigilBPFBytes, syscallTable, compatCalls(), wakeupFraction, goBuildID())
})

func identityOf(object []byte, native, compat map[int]sysdesc, wakeup int, buildID string) []byte {
	h := sha256.New()
	h.Write(object)
	// fmt prints maps sorted by key.
	fmt.Fprintf(h, "\x00%v\x00%v\x00%d\x00%s", native, compat, wakeup, buildID)
	return h.Sum(nil)
}

// goBuildID reads the Go build ID of the running binary, or "" when it
// cannot.
func goBuildID() string {
	f, err := elf.Open("/proc/self/exe")
	if err != nil {
		return ""
	}
	defer f.Close()
	sec := f.Section(".note.go.buildid")
	if sec == nil {
		return ""
	}
	data, err := sec.Data()
	// A note: name size, description size, type, "Go\x00\x00", the ID.
	if err != nil || len(data) < 16 {
		return ""
	}
	return string(data[16:])
}

// sizeName is the ring size as the set name carries it, e.g. 8MiB.
func sizeName(size uint32) string {
	switch {
	case size >= 1<<20 && size%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", size>>20)
	case size%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", size>>10)
	}
	return strconv.FormatUint(uint64(size), 10)
}

// currentSetFor is this binary's set name for the ring size a set name
// carries ("8MiB"), or "" when it is not one.
func currentSetFor(size string) string {
	n, ok := parseSizeName(size)
	if !ok {
		return ""
	}
	return setName(n)
}

// parseSizeName reads a ring size as a set name carries it (sizeName).
func parseSizeName(size string) (uint32, bool) {
	var n uint64
	var err error
	switch {
	case strings.HasSuffix(size, "MiB"):
		n, err = strconv.ParseUint(strings.TrimSuffix(size, "MiB"), 10, 32)
		n <<= 20
	case strings.HasSuffix(size, "KiB"):
		n, err = strconv.ParseUint(strings.TrimSuffix(size, "KiB"), 10, 32)
		n <<= 10
	default:
		n, err = strconv.ParseUint(size, 10, 32)
	}
	if err != nil || n == 0 || n > 1<<30 {
		return 0, false
	}
	return uint32(n), true
}
