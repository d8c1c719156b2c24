//go:build linux

package capture

import "golang.org/x/sys/unix"

// legacyCalls are the x86_64 syscalls that arm64 does not have: the
// forms without a directory descriptor.
func legacyCalls() map[int]sysdesc {
	return map[int]sysdesc{
		unix.SYS_OPEN:    openCall(0, none),
		unix.SYS_CREAT:   openCall(0, none),
		unix.SYS_UNLINK:  fileCall(vigilBPFVigilKindVIGIL_KIND_UNLINK, 0, none, none, none),
		unix.SYS_RMDIR:   fileCall(vigilBPFVigilKindVIGIL_KIND_RMDIR, 0, none, none, none),
		unix.SYS_MKDIR:   fileCall(vigilBPFVigilKindVIGIL_KIND_MKDIR, 0, none, none, none),
		unix.SYS_MKNOD:   fileCall(vigilBPFVigilKindVIGIL_KIND_MKNOD, 0, none, none, none),
		unix.SYS_RENAME:  fileCall(vigilBPFVigilKindVIGIL_KIND_RENAME, 0, none, 1, none),
		unix.SYS_LINK:    fileCall(vigilBPFVigilKindVIGIL_KIND_LINK, 0, none, 1, none),
		unix.SYS_SYMLINK: fileCall(vigilBPFVigilKindVIGIL_KIND_SYMLINK, 0, noDir, 1, none),
		unix.SYS_CHMOD:   fileCall(vigilBPFVigilKindVIGIL_KIND_CHMOD, 0, none, none, none),
		unix.SYS_CHOWN:   fileCall(vigilBPFVigilKindVIGIL_KIND_CHOWN, 0, none, none, none),
		unix.SYS_LCHOWN:  fileCall(vigilBPFVigilKindVIGIL_KIND_CHOWN, 0, none, none, none),
	}
}

var legacyNames = map[int32]string{
	unix.SYS_OPEN: "open", unix.SYS_CREAT: "creat", unix.SYS_UNLINK: "unlink", unix.SYS_RMDIR: "rmdir",
	unix.SYS_MKDIR: "mkdir", unix.SYS_MKNOD: "mknod", unix.SYS_RENAME: "rename", unix.SYS_LINK: "link",
	unix.SYS_SYMLINK: "symlink", unix.SYS_CHMOD: "chmod", unix.SYS_CHOWN: "chown", unix.SYS_LCHOWN: "lchown",
}

// compatCalls maps the i386 numbers of the decoded calls (what a 32-bit
// task, or int 0x80, uses on x86_64) to their kind; such calls are
// counted, not decoded. socketcall(2) multiplexes every socket call; it is
// counted under connect.
func compatCalls() map[int]sysdesc {
	k := func(kind vigilBPFVigilKind) sysdesc { return fileCall(kind, none, none, none, none) }
	return map[int]sysdesc{
		5: openCall(0, none), 8: openCall(0, none), 295: openCall(1, 0), 437: openCall(1, 0), 342: openCall(none, none),
		11: execCall(0, none), 358: execCall(1, 0),
		9: k(vigilBPFVigilKindVIGIL_KIND_LINK), 303: k(vigilBPFVigilKindVIGIL_KIND_LINK),
		10: k(vigilBPFVigilKindVIGIL_KIND_UNLINK), 301: k(vigilBPFVigilKindVIGIL_KIND_UNLINK),
		40: k(vigilBPFVigilKindVIGIL_KIND_RMDIR),
		39: k(vigilBPFVigilKindVIGIL_KIND_MKDIR), 296: k(vigilBPFVigilKindVIGIL_KIND_MKDIR),
		14: k(vigilBPFVigilKindVIGIL_KIND_MKNOD), 297: k(vigilBPFVigilKindVIGIL_KIND_MKNOD),
		38: k(vigilBPFVigilKindVIGIL_KIND_RENAME), 302: k(vigilBPFVigilKindVIGIL_KIND_RENAME), 353: k(vigilBPFVigilKindVIGIL_KIND_RENAME),
		83: k(vigilBPFVigilKindVIGIL_KIND_SYMLINK), 304: k(vigilBPFVigilKindVIGIL_KIND_SYMLINK),
		15: k(vigilBPFVigilKindVIGIL_KIND_CHMOD), 94: k(vigilBPFVigilKindVIGIL_KIND_CHMOD), 306: k(vigilBPFVigilKindVIGIL_KIND_CHMOD), 452: k(vigilBPFVigilKindVIGIL_KIND_CHMOD),
		16: k(vigilBPFVigilKindVIGIL_KIND_CHOWN), 95: k(vigilBPFVigilKindVIGIL_KIND_CHOWN), 182: k(vigilBPFVigilKindVIGIL_KIND_CHOWN),
		198: k(vigilBPFVigilKindVIGIL_KIND_CHOWN), 207: k(vigilBPFVigilKindVIGIL_KIND_CHOWN), 212: k(vigilBPFVigilKindVIGIL_KIND_CHOWN), 298: k(vigilBPFVigilKindVIGIL_KIND_CHOWN),
		92: k(vigilBPFVigilKindVIGIL_KIND_TRUNCATE), 93: k(vigilBPFVigilKindVIGIL_KIND_TRUNCATE), 193: k(vigilBPFVigilKindVIGIL_KIND_TRUNCATE), 194: k(vigilBPFVigilKindVIGIL_KIND_TRUNCATE),
		102: k(vigilBPFVigilKindVIGIL_KIND_CONNECT), 362: k(vigilBPFVigilKindVIGIL_KIND_CONNECT),
		369: k(vigilBPFVigilKindVIGIL_KIND_SEND), 370: k(vigilBPFVigilKindVIGIL_KIND_SEND),
		361: k(vigilBPFVigilKindVIGIL_KIND_BIND), 363: k(vigilBPFVigilKindVIGIL_KIND_LISTEN),
	}
}
