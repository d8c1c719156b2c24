//go:build unix && !aix

package atomicfile

import "golang.org/x/sys/unix"

// dirWritable asks the kernel whether a file can be created in dir. With
// AT_EACCESS the effective ids and capabilities decide, as for the write.
func dirWritable(dir string) error {
	return unix.Faccessat(unix.AT_FDCWD, dir, unix.W_OK|unix.X_OK, unix.AT_EACCESS)
}
