//go:build linux

package capture

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/cilium/ebpf"
)

// bssSection is the map holding the programs' zero-initialised globals:
// struct vigil_session session first, at offset 0, sharing its bytes with
// nothing (TestSessionIsAloneInBSS).
const bssSection = ".bss"

// sessionState reads and writes the programs' struct vigil_session in the
// memory-mapped .bss map. The programs update next_seq and live_tasks
// atomically while a session runs, so user space writes only the field
// it means to change, never the whole struct, once programs are attached.
type sessionState struct {
	mem *ebpf.Memory
}

var sessionLayout vigilBPFVigilSession

func newSessionState(bss *ebpf.Map) (sessionState, error) {
	if bss == nil {
		return sessionState{}, fmt.Errorf("the BPF object has no %s map", bssSection)
	}
	mem, err := bss.Memory()
	if err != nil {
		return sessionState{}, fmt.Errorf("map %s into memory: %w", bssSection, err)
	}
	if mem.Size() < uint32(unsafe.Sizeof(sessionLayout)) {
		return sessionState{}, fmt.Errorf("map %s is %d bytes, smaller than the session state", bssSection, mem.Size())
	}
	return sessionState{mem: mem}, nil
}

// start resets the state for a new session of cgroup id cg. Programs must
// not be attached: it writes every field.
func (s sessionState) start(cg uint64, gen uint32) error {
	b := make([]byte, unsafe.Sizeof(sessionLayout))
	binary.NativeEndian.PutUint64(b[unsafe.Offsetof(sessionLayout.CgroupId):], cg)
	binary.NativeEndian.PutUint32(b[unsafe.Offsetof(sessionLayout.Gen):], gen)
	_, err := s.mem.WriteAt(b, 0)
	return err
}

func (s sessionState) gen() (uint32, error) {
	var b [4]byte
	_, err := s.mem.ReadAt(b[:], int64(unsafe.Offsetof(sessionLayout.Gen)))
	return binary.NativeEndian.Uint32(b[:]), err
}

// close sets closed: from then on a tracked task's records are counted
// as late, not emitted.
func (s sessionState) close() error {
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], 1)
	_, err := s.mem.WriteAt(b[:], int64(unsafe.Offsetof(sessionLayout.Closed)))
	return err
}

func (s sessionState) liveTasks() (int64, error) {
	var b [8]byte
	_, err := s.mem.ReadAt(b[:], int64(unsafe.Offsetof(sessionLayout.LiveTasks)))
	return int64(binary.NativeEndian.Uint64(b[:])), err
}

func (s sessionState) nextSeq() (uint64, error) {
	var b [8]byte
	_, err := s.mem.ReadAt(b[:], int64(unsafe.Offsetof(sessionLayout.NextSeq)))
	return binary.NativeEndian.Uint64(b[:]), err
}

// nextGen is the generation after g, skipping 0 (a fresh task entry's).
func nextGen(g uint32) uint32 {
	if g+1 == 0 {
		return 1
	}
	return g + 1
}
