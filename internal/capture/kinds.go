//go:build linux

package capture

import (
	"vigil/internal/event"
)

// kindByIndex maps the kernel's kind numbers (enum vigil_kind, generated
// from bpf/capture.h) to event kinds.
var kindByIndex = map[vigilBPFVigilKind]event.Kind{
	vigilBPFVigilKindVIGIL_KIND_EXEC:           event.KindExec,
	vigilBPFVigilKindVIGIL_KIND_EXEC_FAILED:    event.KindExecFailed,
	vigilBPFVigilKindVIGIL_KIND_FORK:           event.KindFork,
	vigilBPFVigilKindVIGIL_KIND_EXIT:           event.KindExit,
	vigilBPFVigilKindVIGIL_KIND_OPEN:           event.KindOpen,
	vigilBPFVigilKindVIGIL_KIND_UNLINK:         event.KindUnlink,
	vigilBPFVigilKindVIGIL_KIND_RMDIR:          event.KindRmdir,
	vigilBPFVigilKindVIGIL_KIND_MKDIR:          event.KindMkdir,
	vigilBPFVigilKindVIGIL_KIND_MKNOD:          event.KindMknod,
	vigilBPFVigilKindVIGIL_KIND_RENAME:         event.KindRename,
	vigilBPFVigilKindVIGIL_KIND_LINK:           event.KindLink,
	vigilBPFVigilKindVIGIL_KIND_SYMLINK:        event.KindSymlink,
	vigilBPFVigilKindVIGIL_KIND_CHMOD:          event.KindChmod,
	vigilBPFVigilKindVIGIL_KIND_CHOWN:          event.KindChown,
	vigilBPFVigilKindVIGIL_KIND_TRUNCATE:       event.KindTruncate,
	vigilBPFVigilKindVIGIL_KIND_CONNECT:        event.KindConnect,
	vigilBPFVigilKindVIGIL_KIND_SEND:           event.KindSend,
	vigilBPFVigilKindVIGIL_KIND_BIND:           event.KindBind,
	vigilBPFVigilKindVIGIL_KIND_LISTEN:         event.KindListen,
	vigilBPFVigilKindVIGIL_KIND_CGROUP_MIGRATE: event.KindCgroupMigrate,
	vigilBPFVigilKindVIGIL_KIND_IO_URING:       event.KindIOUring,
}

const numKinds = int(vigilBPFVigilKindVIGIL_NKINDS)

func kindOf(i uint8) (event.Kind, bool) {
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
