//go:build linux

package capture

import (
	"vigil/internal/wire"
)

// kindByIndex maps the kernel's kind numbers (enum vigil_kind, generated
// from bpf/capture.h) to event kinds.
var kindByIndex = map[vigilBPFVigilKind]wire.Kind{
	vigilBPFVigilKindVIGIL_KIND_EXEC:           wire.KindExec,
	vigilBPFVigilKindVIGIL_KIND_EXEC_FAILED:    wire.KindExecFailed,
	vigilBPFVigilKindVIGIL_KIND_FORK:           wire.KindFork,
	vigilBPFVigilKindVIGIL_KIND_EXIT:           wire.KindExit,
	vigilBPFVigilKindVIGIL_KIND_OPEN:           wire.KindOpen,
	vigilBPFVigilKindVIGIL_KIND_UNLINK:         wire.KindUnlink,
	vigilBPFVigilKindVIGIL_KIND_RMDIR:          wire.KindRmdir,
	vigilBPFVigilKindVIGIL_KIND_MKDIR:          wire.KindMkdir,
	vigilBPFVigilKindVIGIL_KIND_MKNOD:          wire.KindMknod,
	vigilBPFVigilKindVIGIL_KIND_RENAME:         wire.KindRename,
	vigilBPFVigilKindVIGIL_KIND_LINK:           wire.KindLink,
	vigilBPFVigilKindVIGIL_KIND_SYMLINK:        wire.KindSymlink,
	vigilBPFVigilKindVIGIL_KIND_CHMOD:          wire.KindChmod,
	vigilBPFVigilKindVIGIL_KIND_CHOWN:          wire.KindChown,
	vigilBPFVigilKindVIGIL_KIND_TRUNCATE:       wire.KindTruncate,
	vigilBPFVigilKindVIGIL_KIND_CONNECT:        wire.KindConnect,
	vigilBPFVigilKindVIGIL_KIND_SEND:           wire.KindSend,
	vigilBPFVigilKindVIGIL_KIND_BIND:           wire.KindBind,
	vigilBPFVigilKindVIGIL_KIND_LISTEN:         wire.KindListen,
	vigilBPFVigilKindVIGIL_KIND_CGROUP_MIGRATE: wire.KindCgroupMigrate,
	vigilBPFVigilKindVIGIL_KIND_IO_URING:       wire.KindIOUring,
}

const numKinds = int(vigilBPFVigilKindVIGIL_NKINDS)

func kindOf(i uint8) (wire.Kind, bool) {
	k, ok := kindByIndex[vigilBPFVigilKind(i)]
	return k, ok
}

// hookNames maps the kernel's hook numbers to the probe's hook name.
var hookNames = func() map[vigilBPFVigilHook]string {
	m := make(map[vigilBPFVigilHook]string, len(probeTable))
	for _, p := range probeTable {
		m[p.id] = p.hook
	}
	return m
}()

func hookName(i uint8) (string, bool) {
	h, ok := hookNames[vigilBPFVigilHook(i)]
	return h, ok
}
