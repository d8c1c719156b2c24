//go:build linux

package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Workloads for the capture v2 tests, run by the test binary itself (see
// runHelper). Each prints what really happened, as the kernel reports it
// to the workload (readlink of the descriptor, getpeername), so a test can
// hold the capture against the truth.
var v2Helpers = map[string]func(args []string) error{
	"toctou-open":            toctouOpen,
	"race-open":              raceOpen,
	"race-connect":           raceConnect,
	"legacy-open":            legacyOpen,
	"iouring-open":           ioUringOpen,
	"iouring-untraced":       ioUringUntraced,
	"iouring-connect":        ioUringConnect,
	"iouring-fileops":        ioUringFileOps,
	"iouring-cqe-forge":      ioUringCQEForge,
	"iouring-unreaped":       ioUringUnreaped,
	"iouring-overflow-reuse": ioUringOverflowReuse,
	"iouring-deferred-swap":  ioUringDeferredSwap,
	"send":                   sendWithDestination,
	"mutate":                 mutate,
	"exec-fail":              execFail,
	"relative":               relativeOpens,
	"memfd-exec":             memfdExec,
	"cgroup-trip":            cgroupRoundTrip,
	"nonutf8":                nonUTF8Names,
	"bind-listen":            bindListen,
	"sleep-outside":          sleepOutside,
	"open-nofollow":          openNoFollow,
	"open-by-handle":         openByHandle,
}

// cstr returns a NUL-terminated copy of s in a buffer of n bytes that
// stays where it is (another goroutine rewrites it in place).
func cstr(s string, n int) []byte {
	b := make([]byte, n)
	copy(b, s)
	return b
}

func rawOpenat(buf []byte, flags int) (int, error) {
	dirfd := unix.AT_FDCWD
	fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&buf[0])), uintptr(flags|unix.O_CLOEXEC), 0, 0, 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

func fdPath(fd int) string {
	p, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", fd))
	if err != nil {
		return "?" + err.Error()
	}
	return p
}

// toctouOpen FIFO DECOY: opens FIFO (which blocks until a writer comes),
// and while the open blocks, rewrites the name in its buffer to DECOY,
// then unblocks it. Prints "tid fd real".
func toctouOpen(args []string) error {
	fifo, decoy := args[0], args[1]
	buf := cstr(fifo, 4096)
	var tid atomic.Int64
	type result struct {
		fd  int
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		tid.Store(int64(unix.Gettid()))
		fd, err := rawOpenat(buf, unix.O_RDONLY)
		done <- result{fd, err}
	}()
	// Wait until the opener sleeps inside openat (syscall 257 on amd64,
	// 56 on arm64) with our buffer as its argument.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if t := tid.Load(); t != 0 {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/syscall", t))
			f := strings.Fields(string(b))
			if len(f) > 2 && f[0] == strconv.Itoa(unix.SYS_OPENAT) && f[2] == fmt.Sprintf("%#x", uintptr(unsafe.Pointer(&buf[0]))) {
				break
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("opener never blocked in openat")
		}
		time.Sleep(time.Millisecond)
	}
	copy(buf, decoy+"\x00")
	w, err := unix.Open(fifo, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	r := <-done
	unix.Close(w)
	if r.err != nil {
		return r.err
	}
	fmt.Println(tid.Load(), r.fd, fdPath(r.fd))
	return unix.Close(r.fd)
}

// raceOpen A B N: one thread opens the name in a buffer N times while
// another flips the buffer between A and B. Prints "tid" and then, per
// open, the file it really opened.
func raceOpen(args []string) error {
	a, b := args[0], args[1]
	n, _ := strconv.Atoi(args[2])
	if len(a) != len(b) {
		return fmt.Errorf("names must have one length")
	}
	buf := cstr(a, 256)
	var stop atomic.Bool
	go func() {
		for i := 0; !stop.Load(); i++ {
			if i%2 == 0 {
				copy(buf, b)
			} else {
				copy(buf, a)
			}
		}
	}()
	runtime.LockOSThread()
	var out strings.Builder
	fmt.Fprintln(&out, unix.Gettid())
	for range n {
		fd, err := rawOpenat(buf, unix.O_RDONLY)
		if err != nil {
			return err
		}
		fmt.Fprintln(&out, fdPath(fd))
		unix.Close(fd)
	}
	stop.Store(true)
	fmt.Print(out.String())
	return nil
}

// raceConnect N: listens on two loopback ports and connects N times
// through one sockaddr buffer whose port another thread flips between
// them. Prints "tid" and then, per connect, the peer port the kernel
// reports.
func raceConnect(args []string) error {
	n, _ := strconv.Atoi(args[0])
	var ports [2]uint16
	for i := range ports {
		l, port, err := loopbackListener()
		if err != nil {
			return err
		}
		defer l.Close()
		ports[i] = port
	}
	sa := loopbackSockaddr(ports[0])
	var stop atomic.Bool
	go func() {
		for i := 0; !stop.Load(); i++ {
			binary.BigEndian.PutUint16(sa[2:], ports[i%2])
		}
	}()
	runtime.LockOSThread()
	var out strings.Builder
	fmt.Fprintln(&out, unix.Gettid())
	for range n {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		_, _, errno := unix.Syscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&sa[0])), 16)
		if errno != 0 {
			unix.Close(fd)
			return errno
		}
		peer, err := unix.Getpeername(fd)
		if err != nil {
			return err
		}
		fmt.Fprintln(&out, peer.(*unix.SockaddrInet4).Port)
		unix.Close(fd)
	}
	stop.Store(true)
	fmt.Print(out.String())
	return nil
}

// legacyOpen DIR: open(2) and creat(2), the calls musl's fopen and creat
// make on x86_64.
func legacyOpen(args []string) error {
	dir := args[0]
	p := cstr(filepath.Join(dir, "via-open"), 256)
	fd, _, errno := unix.Syscall(unix.SYS_OPEN, uintptr(unsafe.Pointer(&p[0])), uintptr(unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC), 0o600)
	if errno != 0 {
		return errno
	}
	unix.Close(int(fd))
	c := cstr(filepath.Join(dir, "via-creat"), 256)
	fd, _, errno = unix.Syscall(unix.SYS_CREAT, uintptr(unsafe.Pointer(&c[0])), 0o640, 0)
	if errno != 0 {
		return errno
	}
	return unix.Close(int(fd))
}

// ioUringOpen PATH [create|tmpfile|direct]: opens PATH twice through
// io_uring (IORING_OP_OPENAT), once inline and once forced onto an io-wq
// worker (IOSQE_ASYNC): read-only, or with create for writing with
// O_CREAT (the first open makes the file, the second finds it), or with
// tmpfile as O_TMPFILE in the directory PATH, or with direct read-only
// into slots 0 and 1 of a registered fixed-file table (the result is 0,
// not a descriptor). Prints the two descriptors (for direct, the results).
func ioUringOpen(args []string) error {
	path := cstr(args[0], 256)
	openFlags := unix.O_RDONLY | unix.O_CLOEXEC
	direct := false
	if len(args) > 1 {
		switch args[1] {
		case "create":
			openFlags = unix.O_WRONLY | unix.O_CREAT | unix.O_CLOEXEC
		case "tmpfile":
			openFlags = unix.O_RDWR | unix.O_TMPFILE | unix.O_CLOEXEC
		case "direct":
			direct = true
			openFlags = unix.O_RDONLY // O_CLOEXEC is refused for a direct descriptor
		default:
			return fmt.Errorf("iouring-open: unknown mode %q", args[1])
		}
	}
	r, err := newTestRing(4)
	if err != nil {
		return err
	}
	defer r.close()
	if direct {
		// Two empty slots (IORING_REGISTER_FILES with -1 entries).
		empty := []int32{-1, -1}
		_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, r.fd, 2, uintptr(unsafe.Pointer(&empty[0])), 2, 0, 0)
		if errno != 0 {
			return fmt.Errorf("io_uring_register files: %w", errno)
		}
	}
	for i, flags := range []byte{0, 1 << 4 /* IOSQE_ASYNC */} {
		sqe := r.sqe()
		sqe[0] = 18 // IORING_OP_OPENAT
		sqe[1] = flags
		binary.LittleEndian.PutUint32(sqe[4:], uint32(0xffffff9c)) // AT_FDCWD
		binary.LittleEndian.PutUint64(sqe[16:], uint64(uintptr(unsafe.Pointer(&path[0]))))
		binary.LittleEndian.PutUint32(sqe[24:], 0o644) // mode
		binary.LittleEndian.PutUint32(sqe[28:], uint32(openFlags))
		if direct {
			binary.LittleEndian.PutUint32(sqe[44:], uint32(i+1)) // file_index: slot i
		}
		binary.LittleEndian.PutUint64(sqe[32:], uint64(100+i)) // user_data
		if err := r.enter(1, 1); err != nil {
			return err
		}
		runtime.KeepAlive(path)
		res := r.reap()
		if res < 0 {
			return fmt.Errorf("io_uring openat: %w", unix.Errno(-res))
		}
		if direct {
			fmt.Println(res)
			continue
		}
		fmt.Println(res, fdPath(int(res)))
		unix.Close(int(res))
	}
	return nil
}

// loopbackListener listens on a free loopback port, accepting (and
// closing) every connection until it is closed.
func loopbackListener() (net.Listener, uint16, error) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, 0, err
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return l, uint16(l.Addr().(*net.TCPAddr).Port), nil
}

// loopbackSockaddr is a struct sockaddr_in for 127.0.0.1:port: family,
// port (big endian), address.
func loopbackSockaddr(port uint16) []byte {
	sa := make([]byte, 16)
	binary.LittleEndian.PutUint16(sa[0:], unix.AF_INET)
	binary.BigEndian.PutUint16(sa[2:], port)
	copy(sa[4:], []byte{127, 0, 0, 1})
	return sa
}

// ioUringConnect N: connects N sockets through io_uring
// (IORING_OP_CONNECT), alternately inline and forced onto an io-wq worker,
// to one of two loopback listeners, through one sockaddr buffer whose port
// another thread flips between them; then one connect to a closed port.
// Prints, per request, its user_data and the peer port getpeername
// reports, or "refused".
func ioUringConnect(args []string) error {
	n, _ := strconv.Atoi(args[0])
	var ports [3]uint16
	for i := range ports {
		l, port, err := loopbackListener()
		if err != nil {
			return err
		}
		ports[i] = port
		if i == 2 {
			l.Close() // nothing listens there any more
			continue
		}
		defer l.Close()
	}
	sa := loopbackSockaddr(ports[0])
	var stop atomic.Bool
	flipped := make(chan struct{})
	go func() {
		defer close(flipped)
		for i := 0; !stop.Load(); i++ {
			binary.BigEndian.PutUint16(sa[2:], ports[i%2])
		}
	}()
	r, err := newTestRing(4)
	if err != nil {
		return err
	}
	defer r.close()
	connect := func(userData uint64, flags byte) (int, int32, error) {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return -1, 0, err
		}
		sqe := r.sqe()
		sqe[0] = 16 // IORING_OP_CONNECT
		sqe[1] = flags
		binary.LittleEndian.PutUint32(sqe[4:], uint32(fd))
		binary.LittleEndian.PutUint64(sqe[8:], 16) // addr2: the address's length
		binary.LittleEndian.PutUint64(sqe[16:], uint64(uintptr(unsafe.Pointer(&sa[0]))))
		binary.LittleEndian.PutUint64(sqe[32:], userData)
		if err := r.enter(1, 1); err != nil {
			unix.Close(fd)
			return -1, 0, err
		}
		return fd, r.reap(), nil
	}
	var out strings.Builder
	for i := range n {
		fd, res, err := connect(uint64(1000+i), byte(i%2)<<4 /* IOSQE_ASYNC */)
		if err != nil {
			return err
		}
		if res < 0 {
			unix.Close(fd)
			return fmt.Errorf("io_uring connect: %w", unix.Errno(-res))
		}
		peer, err := unix.Getpeername(fd)
		unix.Close(fd)
		if err != nil {
			return err
		}
		fmt.Fprintln(&out, 1000+i, peer.(*unix.SockaddrInet4).Port)
	}
	stop.Store(true)
	<-flipped
	binary.BigEndian.PutUint16(sa[2:], ports[2])
	fd, res, err := connect(2000, 0)
	if err != nil {
		return err
	}
	unix.Close(fd)
	if res != -int32(unix.ECONNREFUSED) {
		return fmt.Errorf("io_uring connect to a closed port: result %d, want ECONNREFUSED", res)
	}
	runtime.KeepAlive(sa)
	fmt.Fprintln(&out, 2000, "refused")
	fmt.Print(out.String())
	return nil
}

// ioUringFileOps DIR: the io_uring file-tree requests, on names relative
// to a descriptor of DIR (and one absolute): mkdirat sub, renameat a to
// sub/b, linkat sub/b to c, symlinkat "link-target" as sym, unlinkat c
// forced onto a worker while the caller rewrites the name's buffer to
// "sym" (the kernel copied "c" when it prepared the request), unlinkat
// sub/b, unlinkat of a missing name, and unlinkat AT_REMOVEDIR of DIR/sub
// and renameat of DIR/sym to DIR/sym2, by absolute names. Prints
// "user_data result" per request.
func ioUringFileOps(args []string) error {
	dir := args[0]
	if err := os.WriteFile(filepath.Join(dir, "a"), nil, 0o644); err != nil {
		return err
	}
	dfd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(dfd)
	r, err := newTestRing(4)
	if err != nil {
		return err
	}
	defer r.close()
	var keep [][]byte
	ptr := func(s string) uint64 {
		b := cstr(s, 256)
		keep = append(keep, b)
		return uint64(uintptr(unsafe.Pointer(&b[0])))
	}
	type req struct {
		op, flags byte
		fd        int32
		addr      uint64
		len       uint32
		addr2     uint64
		opFlags   uint32
		// rewrite, if set, is done to the name after submission and
		// before the completion is awaited.
		rewrite func()
	}
	victim := cstr("c", 256)
	reqs := []req{
		{op: 37, fd: int32(dfd), addr: ptr("sub"), len: 0o755},                          // mkdirat
		{op: 35, fd: int32(dfd), addr: ptr("a"), len: uint32(dfd), addr2: ptr("sub/b")}, // renameat
		{op: 39, fd: int32(dfd), addr: ptr("sub/b"), len: uint32(dfd), addr2: ptr("c")}, // linkat
		{op: 38, fd: int32(dfd), addr: ptr("link-target"), addr2: ptr("sym")},           // symlinkat
		{op: 36, flags: 1 << 4, fd: int32(dfd), addr: uint64(uintptr(unsafe.Pointer(&victim[0]))), // unlinkat, IOSQE_ASYNC
			rewrite: func() { copy(victim, "sym\x00") }},
		{op: 36, fd: int32(dfd), addr: ptr("sub/b")},                                                                      // unlinkat
		{op: 36, fd: int32(dfd), addr: ptr("missing")},                                                                    // unlinkat: ENOENT
		{op: 36, fd: -100, addr: ptr(filepath.Join(dir, "sub")), opFlags: unix.AT_REMOVEDIR},                              // rmdir, absolute
		{op: 35, fd: -100, addr: ptr(filepath.Join(dir, "sym")), len: 0xffffff9c, addr2: ptr(filepath.Join(dir, "sym2"))}, // renameat, absolute
	}
	var out strings.Builder
	for i, q := range reqs {
		sqe := r.sqe()
		sqe[0], sqe[1] = q.op, q.flags
		binary.LittleEndian.PutUint32(sqe[4:], uint32(q.fd))
		binary.LittleEndian.PutUint64(sqe[8:], q.addr2)
		binary.LittleEndian.PutUint64(sqe[16:], q.addr)
		binary.LittleEndian.PutUint32(sqe[24:], q.len)
		binary.LittleEndian.PutUint32(sqe[28:], q.opFlags)
		binary.LittleEndian.PutUint64(sqe[32:], uint64(3000+i))
		if q.rewrite != nil {
			if err := r.enter(1, 0); err != nil {
				return err
			}
			q.rewrite()
			if err := r.enter(0, 1); err != nil {
				return err
			}
		} else if err := r.enter(1, 1); err != nil {
			return err
		}
		fmt.Fprintln(&out, 3000+i, r.reap())
	}
	runtime.KeepAlive(keep)
	runtime.KeepAlive(victim)
	if _, err := os.Lstat(filepath.Join(dir, "sym2")); err != nil {
		return fmt.Errorf("the rewritten name's file is gone: %w", err)
	}
	fmt.Print(out.String())
	return nil
}

// ioUringCQEForge PATH N: opens PATH N times through io_uring while
// another thread keeps writing the descriptor of /dev/null into the result
// of every CQE slot of the ring (memory the workload has mapped writable).
// Prints the /dev/null descriptor.
func ioUringCQEForge(args []string) error {
	path := cstr(args[0], 256)
	n, _ := strconv.Atoi(args[1])
	decoy, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(decoy)
	r, err := newTestRing(4)
	if err != nil {
		return err
	}
	defer r.close()
	// Each open gets the lowest free descriptor, which the helper
	// learns once and closes after each open.
	next, err := unix.Dup(decoy)
	if err != nil {
		return err
	}
	unix.Close(next)
	cqes := r.param(r.cqOff + 20)
	entries := *r.at(r.ring, r.param(r.cqOff+12))
	var stop atomic.Bool
	forged := make(chan struct{})
	go func() {
		defer close(forged)
		for !stop.Load() {
			for i := range entries {
				atomic.StoreUint32(r.at(r.ring, cqes+16*i+8), uint32(decoy))
			}
		}
	}()
	// Before the ring is unmapped, whatever happens.
	defer func() {
		stop.Store(true)
		<-forged
	}()
	for i := range n {
		sqe := r.sqe()
		sqe[0] = 18 // IORING_OP_OPENAT
		binary.LittleEndian.PutUint32(sqe[4:], uint32(0xffffff9c))
		binary.LittleEndian.PutUint64(sqe[16:], uint64(uintptr(unsafe.Pointer(&path[0]))))
		binary.LittleEndian.PutUint32(sqe[28:], uint32(unix.O_RDONLY|unix.O_CLOEXEC))
		binary.LittleEndian.PutUint64(sqe[32:], uint64(5000+i))
		if err := r.enter(1, 1); err != nil {
			return err
		}
		// The slot may hold the forged value by now: the descriptor the
		// open made is the lowest free one.
		r.reap()
		if real := fdPath(next); real != args[0] {
			return fmt.Errorf("open %d: descriptor %d is %q", i, next, real)
		}
		unix.Close(next)
	}
	runtime.KeepAlive(path)
	fmt.Println(decoy)
	return nil
}

// ioUringUnreaped PATH: submits an unlinkat of PATH on a ring whose
// completions wait for the task to ask (IORING_SETUP_SINGLE_ISSUER |
// IORING_SETUP_DEFER_TASKRUN), and exits without asking: the kernel
// completes the request while tearing the ring down, in a kworker.
func ioUringUnreaped(args []string) error {
	// A SINGLE_ISSUER ring takes submissions from the thread that made it.
	runtime.LockOSThread()
	r, err := newTestRingFlags(4, 1<<12|1<<13)
	if err != nil {
		return err
	}
	path := cstr(args[0], 256)
	sqe := r.sqe()
	sqe[0] = 36 // IORING_OP_UNLINKAT
	binary.LittleEndian.PutUint32(sqe[4:], uint32(0xffffff9c))
	binary.LittleEndian.PutUint64(sqe[16:], uint64(uintptr(unsafe.Pointer(&path[0]))))
	binary.LittleEndian.PutUint64(sqe[32:], 6000)
	if err := r.enter(1, 0); err != nil {
		return err
	}
	runtime.KeepAlive(path)
	os.Exit(0) // without reaping, or closing the ring
	return nil
}

// ioUringOverflowReuse PATH: an unlinkat of PATH whose completion is
// queued past a full CQ ring (unreaped NOPs fill it), then, once the ring
// has room, batches of unlinkats with the same user_data that fail before
// submission (bad flags), among which the kernel reuses the address the
// first one freed.
func ioUringOverflowReuse(args []string) error {
	const sq = 64
	// IORING_SETUP_SUBMIT_ALL: a request that fails does not stop the
	// batch behind it.
	r, err := newTestRingFlags(sq, 1<<7) // a CQ ring of 2*sq
	if err != nil {
		return err
	}
	defer r.close()
	for range 2 {
		for range sq {
			r.sqe() // NOP
		}
		if err := r.enter(sq, 0); err != nil {
			return err
		}
	}
	path := cstr(args[0], 256)
	unlink := func(flags uint32) {
		sqe := r.sqe()
		sqe[0] = 36 // IORING_OP_UNLINKAT
		binary.LittleEndian.PutUint32(sqe[4:], uint32(0xffffff9c))
		binary.LittleEndian.PutUint64(sqe[16:], uint64(uintptr(unsafe.Pointer(&path[0]))))
		binary.LittleEndian.PutUint32(sqe[28:], flags)
		binary.LittleEndian.PutUint64(sqe[32:], 7000)
	}
	unlink(0)
	if err := r.enter(1, 0); err != nil {
		return err
	}
	for i := 0; ; i++ {
		if _, err := os.Stat(args[0]); os.IsNotExist(err) {
			break
		}
		if i == 500 {
			return fmt.Errorf("%s not unlinked", args[0])
		}
		time.Sleep(2 * time.Millisecond)
	}
	// The file goes before the worker posts the completion: reaping now
	// could make room for it, and nothing would overflow. Wait for the
	// kernel's IORING_SQ_CQ_OVERFLOW flag instead.
	sqFlags := (*uint32)(unsafe.Pointer(&r.ring[r.param(r.sqOff+16)]))
	for i := 0; atomic.LoadUint32(sqFlags)&2 == 0; i++ {
		if i == 500 {
			return fmt.Errorf("the unlink's completion never overflowed the CQ ring")
		}
		time.Sleep(2 * time.Millisecond)
	}
	for range 2 * sq {
		r.reap()
	}
	for range 4 {
		for range sq {
			unlink(0x1234)
		}
		if err := r.enter(sq, sq); err != nil {
			return err
		}
		for range sq {
			r.reap()
		}
	}
	runtime.KeepAlive(path)
	return nil
}

// ioUringDeferredSwap PATH DECOY: opens PATH for writing with O_TRUNC on
// a worker (IOSQE_ASYNC) of a ring whose completions wait for the task to
// ask (SINGLE_ISSUER | DEFER_TASKRUN), waits until the open has made its
// descriptor, puts DECOY on that descriptor (dup2), and only then asks
// for the completion. Prints the descriptor.
func ioUringDeferredSwap(args []string) error {
	// A SINGLE_ISSUER ring takes submissions from the thread that made it.
	runtime.LockOSThread()
	decoy, err := unix.Open(args[1], unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	r, err := newTestRingFlags(4, 1<<12|1<<13)
	if err != nil {
		return err
	}
	defer r.close()
	path := cstr(args[0], 256)
	sqe := r.sqe()
	sqe[0] = 18     // IORING_OP_OPENAT
	sqe[1] = 1 << 4 // IOSQE_ASYNC
	binary.LittleEndian.PutUint32(sqe[4:], uint32(0xffffff9c))
	binary.LittleEndian.PutUint64(sqe[16:], uint64(uintptr(unsafe.Pointer(&path[0]))))
	binary.LittleEndian.PutUint32(sqe[28:], uint32(unix.O_WRONLY|unix.O_TRUNC|unix.O_CLOEXEC))
	binary.LittleEndian.PutUint64(sqe[32:], 8000)
	if err := r.enter(1, 0); err != nil {
		return err
	}
	// The descriptor the open made (the Go runtime may have taken
	// descriptors of its own meanwhile, so it is looked for).
	next := -1
	for i := 0; next < 0; i++ {
		if i == 1000 {
			return fmt.Errorf("no descriptor became %s", args[0])
		}
		time.Sleep(time.Millisecond)
		ents, _ := os.ReadDir("/proc/self/fd")
		for _, e := range ents {
			if fd, err := strconv.Atoi(e.Name()); err == nil && fdPath(fd) == args[0] {
				next = fd
			}
		}
	}
	if err := unix.Dup3(decoy, next, unix.O_CLOEXEC); err != nil {
		return err
	}
	if err := r.enter(0, 1); err != nil {
		return err
	}
	if res := r.reap(); res != int32(next) {
		return fmt.Errorf("open returned %d, want %d", res, next)
	}
	runtime.KeepAlive(path)
	fmt.Println(next)
	return nil
}

// testRing is an io_uring instance driven by hand (no liburing): one
// submission at a time at the SQ tail, completions reaped at the CQ head.
type testRing struct {
	fd           uintptr
	ring, sqes   []byte
	sqOff, cqOff uint32
	params       [120]byte
}

func newTestRing(entries uint32) (*testRing, error) { return newTestRingFlags(entries, 0) }

// newTestRingFlags sets the ring up with IORING_SETUP_* flags.
func newTestRingFlags(entries, flags uint32) (*testRing, error) {
	r := &testRing{sqOff: 40, cqOff: 80} // struct io_sqring_offsets, io_cqring_offsets
	binary.LittleEndian.PutUint32(r.params[8:], flags)
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(&r.params[0])), 0)
	if errno != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", errno)
	}
	r.fd = fd
	sqEntries, cqEntries := r.param(0), r.param(4)
	sqSize := int(r.param(r.sqOff+24)) + int(sqEntries)*4
	cqSize := int(r.param(r.cqOff+20)) + int(cqEntries)*16
	var err error
	// One mapping for both rings (IORING_FEAT_SINGLE_MMAP, 5.4+).
	if r.ring, err = unix.Mmap(int(fd), 0, max(sqSize, cqSize), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		unix.Close(int(fd))
		return nil, err
	}
	if r.sqes, err = unix.Mmap(int(fd), 0x10000000, int(sqEntries)*64, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *testRing) param(off uint32) uint32 { return binary.LittleEndian.Uint32(r.params[off:]) }

func (r *testRing) at(b []byte, off uint32) *uint32 { return (*uint32)(unsafe.Pointer(&b[off])) }

// sqe returns the cleared entry at the SQ tail and queues it.
func (r *testRing) sqe() []byte {
	tail := atomic.LoadUint32(r.at(r.ring, r.param(r.sqOff+4)))
	mask := *r.at(r.ring, r.param(r.sqOff+8))
	idx := tail & mask
	*r.at(r.ring, r.param(r.sqOff+24)+4*idx) = idx
	atomic.StoreUint32(r.at(r.ring, r.param(r.sqOff+4)), tail+1)
	e := r.sqes[64*idx : 64*idx+64]
	clear(e)
	return e
}

// enter submits n queued entries and waits for min completions.
func (r *testRing) enter(n, min uint32) error {
	flags := uintptr(0)
	if min > 0 {
		flags = 1 // IORING_ENTER_GETEVENTS
	}
	if _, _, errno := unix.Syscall6(unix.SYS_IO_URING_ENTER, r.fd, uintptr(n), uintptr(min), flags, 0, 0); errno != 0 {
		return fmt.Errorf("io_uring_enter: %w", errno)
	}
	return nil
}

// reap takes the completion at the CQ head and returns its result.
func (r *testRing) reap() int32 {
	head := atomic.LoadUint32(r.at(r.ring, r.param(r.cqOff)))
	cqMask := *r.at(r.ring, r.param(r.cqOff+8))
	cqe := r.ring[r.param(r.cqOff+20)+16*(head&cqMask):]
	res := int32(binary.LittleEndian.Uint32(cqe[8:]))
	atomic.StoreUint32(r.at(r.ring, r.param(r.cqOff)), head+1)
	return res
}

func (r *testRing) close() {
	if r.sqes != nil {
		unix.Munmap(r.sqes)
	}
	if r.ring != nil {
		unix.Munmap(r.ring)
	}
	unix.Close(int(r.fd))
}

// ioUringUntraced: completions io_uring_complete never sees. One NOP with
// IOSQE_CQE_SKIP_SUCCESS, then ten NOPs into a CQ ring of eight without
// reaping (two overflow). Prints the CQ ring's size.
func ioUringUntraced([]string) error {
	r, err := newTestRing(4)
	if err != nil {
		return err
	}
	defer r.close()
	r.sqe()[1] = 1 << 6 // IORING_OP_NOP (0), IOSQE_CQE_SKIP_SUCCESS
	if err := r.enter(1, 0); err != nil {
		return err
	}
	for sent := 0; sent < 10; {
		n := min(4, 10-sent)
		for range n {
			r.sqe() // IORING_OP_NOP
		}
		if err := r.enter(uint32(n), 0); err != nil {
			return err
		}
		sent += n
	}
	fmt.Println(r.param(4))
	return nil
}

// sendWithDestination PORT: UDP datagrams to 127.0.0.1 and [::1] with
// sendto and sendmsg, and a TCP Fast Open sendto to 127.0.0.1 (PORT is a
// TCP listener).
func sendWithDestination(args []string) error {
	port, _ := strconv.Atoi(args[0])
	u4, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(u4)
	if err := unix.Sendto(u4, []byte("v4"), 0, &unix.SockaddrInet4{Port: port + 1, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fmt.Errorf("sendto v4: %w", err)
	}
	if _, err := unix.SendmsgN(u4, []byte("v4msg"), nil, &unix.SockaddrInet4{Port: port + 2, Addr: [4]byte{127, 0, 0, 1}}, 0); err != nil {
		return fmt.Errorf("sendmsg v4: %w", err)
	}
	u6, err := unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(u6)
	if err := unix.Sendto(u6, []byte("v6"), 0, &unix.SockaddrInet6{Port: port + 3, Addr: [16]byte{15: 1}}); err != nil {
		return fmt.Errorf("sendto v6: %w", err)
	}
	// A connected socket sends without naming a destination: connect is
	// the event, the sends are not.
	c, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(c)
	if err := unix.Connect(c, &unix.SockaddrInet4{Port: port + 4, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return err
	}
	// Nothing listens there: after the first datagram the kernel may
	// answer ECONNREFUSED, which does not matter here.
	unix.Write(c, []byte("w"))
	unix.Sendto(c, []byte("s"), 0, nil)
	unix.SendmsgN(c, []byte("m"), nil, nil, 0)
	t, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(t)
	// Without a cookie the data waits for the handshake; either way the
	// kernel connects to the address given here.
	err = unix.Sendto(t, []byte("tfo"), unix.MSG_FASTOPEN, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}})
	if err != nil && err != unix.EINPROGRESS {
		return fmt.Errorf("sendto MSG_FASTOPEN: %w", err)
	}
	return nil
}

// mutate DIR: every file-tree change the capture declares, in DIR.
func mutate(args []string) error {
	dir := args[0]
	j := func(n string) string { return filepath.Join(dir, n) }
	steps := []func() error{
		func() error { return unix.Mkdir(j("d"), 0o750) },
		func() error { return os.WriteFile(j("f"), []byte("data"), 0o644) },
		func() error { return unix.Chmod(j("f"), 0o600) },
		func() error { return unix.Chown(j("f"), 0, 0) },
		func() error { return unix.Link(j("f"), j("hard")) },
		func() error { return unix.Symlink("f", j("soft")) },
		func() error { return unix.Rename(j("f"), j("d/g")) },
		func() error { return unix.Truncate(j("d/g"), 2) },
		func() error {
			fd, err := unix.Open(j("d/g"), unix.O_RDWR|unix.O_CLOEXEC, 0)
			if err != nil {
				return err
			}
			defer unix.Close(fd)
			if err := unix.Ftruncate(fd, 1); err != nil {
				return err
			}
			if err := unix.Fchmod(fd, 0o640); err != nil {
				return err
			}
			return unix.Fchown(fd, 0, 0)
		},
		func() error { return unix.Mkfifo(j("fifo"), 0o600) },
		func() error { return unix.Unlink(j("hard")) },
		func() error { return unix.Unlink(j("soft")) },
		func() error { return unix.Unlink(j("fifo")) },
		func() error { return unix.Unlink(j("d/g")) },
		func() error { return unix.Rmdir(j("d")) },
		// A refusal is recorded too, with its errno.
		func() error {
			if err := unix.Unlink(j("never-there")); err != unix.ENOENT {
				return fmt.Errorf("unlink of a missing file: %v", err)
			}
			return nil
		},
	}
	for i, s := range steps {
		if err := s(); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
	}
	return nil
}

// execFail DIR: execve of a missing program and of a file without the
// execute bit; both must fail.
func execFail(args []string) error {
	noexec := filepath.Join(args[0], "not-executable")
	if err := os.WriteFile(noexec, []byte("#!/bin/true\n"), 0o644); err != nil {
		return err
	}
	if err := unix.Exec(filepath.Join(args[0], "missing"), []string{"missing"}, nil); err != unix.ENOENT {
		return fmt.Errorf("exec of a missing program: %v", err)
	}
	if err := unix.Exec(noexec, []string{"x"}, nil); err != unix.EACCES {
		return fmt.Errorf("exec of a non-executable file: %v", err)
	}
	return nil
}

// relativeOpens DIR: a relative open through a directory descriptor, and
// one after chdir; then a failed relative open.
func relativeOpens(args []string) error {
	dir := args[0]
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		return err
	}
	for _, n := range []string{"sub/by-dirfd", "sub/by-cwd"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			return err
		}
	}
	dfd, err := unix.Open(filepath.Join(dir, "sub"), unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	fd, err := unix.Openat(dfd, "by-dirfd", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	unix.Close(fd)
	unix.Close(dfd)
	if err := unix.Chdir(filepath.Join(dir, "sub")); err != nil {
		return err
	}
	fd, err = unix.Open("by-cwd", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	unix.Close(fd)
	if _, err := unix.Open("no-such", unix.O_RDONLY|unix.O_CLOEXEC, 0); err != unix.ENOENT {
		return fmt.Errorf("open of a missing file: %v", err)
	}
	return nil
}

// memfdExec: copies /bin/true into a memfd named "payload" and executes
// it through the descriptor (fexecve).
func memfdExec([]string) error {
	prog, err := os.ReadFile("/bin/true")
	if err != nil {
		return err
	}
	fd, err := unix.MemfdCreate("payload", 0)
	if err != nil {
		return err
	}
	if _, err := unix.Write(fd, prog); err != nil {
		return err
	}
	empty := cstr("", 8)
	argv := []*byte{&cstr("payload", 16)[0], nil}
	envp := []*byte{nil}
	_, _, errno := unix.Syscall6(unix.SYS_EXECVEAT, uintptr(fd), uintptr(unsafe.Pointer(&empty[0])),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envp[0])), unix.AT_EMPTY_PATH, 0)
	return fmt.Errorf("execveat of a memfd: %v", errno)
}

// cgroupRoundTrip SESSION OUTSIDE MARKER: moves this process to the
// OUTSIDE cgroup, opens MARKER there, and moves back into SESSION.
func cgroupRoundTrip(args []string) error {
	session, outside, marker := args[0], args[1], args[2]
	pid := []byte(strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(filepath.Join(outside, "cgroup.procs"), pid, 0); err != nil {
		return fmt.Errorf("leave the session: %w", err)
	}
	if err := os.WriteFile(marker, []byte("outside"), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(session, "cgroup.procs"), pid, 0); err != nil {
		return fmt.Errorf("come back: %w", err)
	}
	return nil
}

// nonUTF8Names DIR: creates two files whose names differ only in a byte
// that is not UTF-8.
func nonUTF8Names(args []string) error {
	for _, n := range []string{"name-\xff", "name-\xfe"} {
		if err := os.WriteFile(filepath.Join(args[0], n), nil, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// bindListen: binds a TCP socket to 127.0.0.1:0 and listens; prints the
// port the kernel gave it.
func bindListen([]string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return err
	}
	if err := unix.Listen(fd, 7); err != nil {
		return err
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return err
	}
	fmt.Println(sa.(*unix.SockaddrInet4).Port)
	return nil
}

// sleepOutside OUTSIDE MARKER: moves to OUTSIDE and stays there, alive,
// for a minute, opening MARKER first. The test kills it.
func sleepOutside(args []string) error {
	if err := moveOutside(args[0], args[1]); err != nil {
		return err
	}
	time.Sleep(time.Minute)
	return nil
}

// moveOutside moves the calling process to cgroup dir, creates marker
// there and says "outside".
func moveOutside(dir, marker string) error {
	pid := []byte(strconv.Itoa(os.Getpid()))
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), pid, 0); err != nil {
		return err
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		return err
	}
	fmt.Println("outside")
	return nil
}

// openNoFollow LINK: an open through a symlink resolves to its target.
func openNoFollow(args []string) error {
	fd, err := unix.Open(args[0], unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	fmt.Println(fdPath(fd))
	return unix.Close(fd)
}

// openByHandle PATH: opens PATH by a file handle (name_to_handle_at, then
// open_by_handle_at with a descriptor of PATH's directory as mount_fd),
// then tries a handle that names nothing. Prints the mount descriptor, the
// opened descriptor's path and the bad handle's errno.
func openByHandle(args []string) error {
	h, _, err := unix.NameToHandleAt(unix.AT_FDCWD, args[0], 0)
	if err != nil {
		return fmt.Errorf("name_to_handle_at: %w", err)
	}
	mount, err := unix.Open(filepath.Dir(args[0]), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(mount)
	fd, err := unix.OpenByHandleAt(mount, h, unix.O_RDONLY|unix.O_CLOEXEC)
	if err != nil {
		return fmt.Errorf("open_by_handle_at: %w", err)
	}
	fmt.Println(mount, fdPath(fd))
	unix.Close(fd)
	bad := unix.NewFileHandle(h.Type(), make([]byte, len(h.Bytes())))
	_, err = unix.OpenByHandleAt(mount, bad, unix.O_RDONLY|unix.O_CLOEXEC)
	var errno unix.Errno
	if !errors.As(err, &errno) {
		return fmt.Errorf("open_by_handle_at of a zeroed handle: %v, want an errno", err)
	}
	fmt.Println(int(errno))
	return nil
}
