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
		unix.SYS_SYMLINK: fileCall(vigilBPFVigilKindVIGIL_KIND_SYMLINK, 0, none, 1, none),
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
