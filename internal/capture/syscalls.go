//go:build linux

package capture

import (
	"fmt"

	"github.com/cilium/ebpf"

	"golang.org/x/sys/unix"
)

// sysdesc says what the sys_exit program records of one syscall: which
// arguments are names (read from the caller's memory), which are the
// directory descriptors those names are relative to (-1: the working
// directory), which is a descriptor naming the object, which a sockaddr.
type sysdesc = vigilBPFVigilSysdesc

const none = -1

// noDir marks a name argument that is text, not a name to resolve (a
// symlink's target): VIGIL_DIR_NONE in bpf/capture.h.
const noDir = -2

func fileCall(kind vigilBPFVigilKind, nameA, dirA, nameB, dirB int8) sysdesc {
	return sysdesc{Op: uint8(vigilBPFVigilOpVIGIL_OP_FILE), Kind: uint8(kind), NameA: nameA, DirA: dirA, NameB: nameB, DirB: dirB, Fd: none, Addr: none}
}

func fdCall(kind vigilBPFVigilKind, fd int8) sysdesc {
	return sysdesc{Op: uint8(vigilBPFVigilOpVIGIL_OP_FILE), Kind: uint8(kind), NameA: none, DirA: none, NameB: none, DirB: none, Fd: fd, Addr: none}
}

func openCall(nameA, dirA int8) sysdesc {
	return sysdesc{Op: uint8(vigilBPFVigilOpVIGIL_OP_OPEN), Kind: uint8(vigilBPFVigilKindVIGIL_KIND_OPEN), NameA: nameA, DirA: dirA, NameB: none, DirB: none, Fd: none, Addr: none}
}

// openat2Call is openat's, plus where struct open_how is (Addr).
func openat2Call() sysdesc {
	d := openCall(1, 0)
	d.Addr = 2
	return d
}

func execCall(nameA, dirA int8) sysdesc {
	return sysdesc{Op: uint8(vigilBPFVigilOpVIGIL_OP_EXEC), Kind: uint8(vigilBPFVigilKindVIGIL_KIND_EXEC_FAILED), NameA: nameA, DirA: dirA, NameB: none, DirB: none, Fd: none, Addr: none}
}

func netCall(op vigilBPFVigilOp, kind vigilBPFVigilKind, addr int8) sysdesc {
	return sysdesc{Op: uint8(op), Kind: uint8(kind), NameA: none, DirA: none, NameB: none, DirB: none, Fd: 0, Addr: addr}
}

// syscallTable is every syscall the capture decodes, by number on the
// architecture this binary is built for (legacyCalls adds the ones only
// some architectures have).
var syscallTable = func() map[int]sysdesc {
	t := map[int]sysdesc{
		unix.SYS_OPENAT:  openCall(1, 0),
		unix.SYS_OPENAT2: openat2Call(),
		// A handle names no path: the file is the record, as for
		// every successful open.
		unix.SYS_OPEN_BY_HANDLE_AT: openCall(none, none),
		unix.SYS_EXECVE:            execCall(0, none),
		unix.SYS_EXECVEAT:          execCall(1, 0),
		unix.SYS_UNLINKAT:          fileCall(vigilBPFVigilKindVIGIL_KIND_UNLINK, 1, 0, none, none),
		unix.SYS_MKDIRAT:           fileCall(vigilBPFVigilKindVIGIL_KIND_MKDIR, 1, 0, none, none),
		unix.SYS_MKNODAT:           fileCall(vigilBPFVigilKindVIGIL_KIND_MKNOD, 1, 0, none, none),
		unix.SYS_RENAMEAT:          fileCall(vigilBPFVigilKindVIGIL_KIND_RENAME, 1, 0, 3, 2),
		unix.SYS_RENAMEAT2:         fileCall(vigilBPFVigilKindVIGIL_KIND_RENAME, 1, 0, 3, 2),
		unix.SYS_LINKAT:            fileCall(vigilBPFVigilKindVIGIL_KIND_LINK, 1, 0, 3, 2),
		unix.SYS_SYMLINKAT:         fileCall(vigilBPFVigilKindVIGIL_KIND_SYMLINK, 0, none, 2, 1),
		unix.SYS_FCHMOD:            fdCall(vigilBPFVigilKindVIGIL_KIND_CHMOD, 0),
		unix.SYS_FCHMODAT:          fileCall(vigilBPFVigilKindVIGIL_KIND_CHMOD, 1, 0, none, none),
		unix.SYS_FCHMODAT2:         fileCall(vigilBPFVigilKindVIGIL_KIND_CHMOD, 1, 0, none, none),
		unix.SYS_FCHOWN:            fdCall(vigilBPFVigilKindVIGIL_KIND_CHOWN, 0),
		unix.SYS_FCHOWNAT:          fileCall(vigilBPFVigilKindVIGIL_KIND_CHOWN, 1, 0, none, none),
		unix.SYS_TRUNCATE:          fileCall(vigilBPFVigilKindVIGIL_KIND_TRUNCATE, 0, none, none, none),
		unix.SYS_FTRUNCATE:         fdCall(vigilBPFVigilKindVIGIL_KIND_TRUNCATE, 0),
		unix.SYS_CONNECT:           netCall(vigilBPFVigilOpVIGIL_OP_CONNECT, vigilBPFVigilKindVIGIL_KIND_CONNECT, 1),
		unix.SYS_SENDTO:            netCall(vigilBPFVigilOpVIGIL_OP_SENDTO, vigilBPFVigilKindVIGIL_KIND_SEND, 4),
		unix.SYS_SENDMSG:           netCall(vigilBPFVigilOpVIGIL_OP_SENDMSG, vigilBPFVigilKindVIGIL_KIND_SEND, none),
		unix.SYS_BIND:              netCall(vigilBPFVigilOpVIGIL_OP_BIND, vigilBPFVigilKindVIGIL_KIND_BIND, 1),
		unix.SYS_LISTEN:            netCall(vigilBPFVigilOpVIGIL_OP_LISTEN, vigilBPFVigilKindVIGIL_KIND_LISTEN, none),
	}
	for nr, d := range legacyCalls() {
		t[nr] = d
	}
	return t
}()

// syscallNames names the decoded syscalls by number.
var syscallNames = map[int32]string{
	unix.SYS_OPENAT: "openat", unix.SYS_OPENAT2: "openat2", unix.SYS_OPEN_BY_HANDLE_AT: "open_by_handle_at", unix.SYS_EXECVE: "execve", unix.SYS_EXECVEAT: "execveat",
	unix.SYS_UNLINKAT: "unlinkat", unix.SYS_MKDIRAT: "mkdirat", unix.SYS_MKNODAT: "mknodat",
	unix.SYS_RENAMEAT: "renameat", unix.SYS_RENAMEAT2: "renameat2", unix.SYS_LINKAT: "linkat", unix.SYS_SYMLINKAT: "symlinkat",
	unix.SYS_FCHMOD: "fchmod", unix.SYS_FCHMODAT: "fchmodat", unix.SYS_FCHMODAT2: "fchmodat2",
	unix.SYS_FCHOWN: "fchown", unix.SYS_FCHOWNAT: "fchownat", unix.SYS_TRUNCATE: "truncate", unix.SYS_FTRUNCATE: "ftruncate",
	unix.SYS_CONNECT: "connect", unix.SYS_SENDTO: "sendto", unix.SYS_SENDMSG: "sendmsg", unix.SYS_BIND: "bind", unix.SYS_LISTEN: "listen",
}

func syscallName(nr int32) string {
	if n, ok := syscallNames[nr]; ok {
		return n
	}
	if n, ok := legacyNames[nr]; ok {
		return n
	}
	return fmt.Sprintf("nr_%d", nr)
}

// fillSyscalls writes the architecture's table and the 32-bit one into
// the kernel's syscalls map, one entry per number.
func fillSyscalls(m *ebpf.Map, native, compat map[int]sysdesc) error {
	entries := map[int]*vigilBPFVigilSysentry{}
	entry := func(nr int) *vigilBPFVigilSysentry {
		if entries[nr] == nil {
			entries[nr] = &vigilBPFVigilSysentry{}
		}
		return entries[nr]
	}
	for nr, d := range native {
		entry(nr).Native = d
	}
	for nr, d := range compat {
		entry(nr).Compat = d
	}
	for nr, e := range entries {
		if nr < 0 || nr >= int(m.MaxEntries()) {
			return fmt.Errorf("syscall %d beyond the table's %d entries", nr, m.MaxEntries())
		}
		if err := m.Update(uint32(nr), e, 0); err != nil {
			return fmt.Errorf("syscall %d: %w", nr, err)
		}
	}
	return nil
}
