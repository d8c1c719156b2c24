package capture

import (
	"encoding/binary"
	"strings"
	"testing"

	"vigil/internal/event"
)

// record builds a raw record as bpf/capture.bpf.c lays it out.
func record(kind byte, flags byte, body []byte, str1, str2 string) []byte {
	b := make([]byte, recFixedSize, recFixedSize+len(str1)+len(str2))
	binary.LittleEndian.PutUint64(b[0:], 7)      // seq
	binary.LittleEndian.PutUint64(b[8:], 123456) // ts
	binary.LittleEndian.PutUint64(b[16:], 99)    // cgroup id
	binary.LittleEndian.PutUint32(b[24:], 1000)  // pid
	binary.LittleEndian.PutUint32(b[28:], 1001)  // tid
	b[32], b[33] = kind, flags
	binary.LittleEndian.PutUint16(b[34:], uint16(len(str1)))
	binary.LittleEndian.PutUint16(b[36:], uint16(len(str2)))
	copy(b[40:], "worker\x00garbage")
	copy(b[recBodyOff:], body)
	return append(append(b, str1...), str2...)
}

func le32(vs ...uint32) []byte {
	b := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}

func TestDecodeKinds(t *testing.T) {
	d, err := decodeRecord(record(0, 0, nil, "/usr/bin/cat", "cat"))
	if err != nil || d.ev.Kind != event.KindExec || d.ev.Exec.Filename != "/usr/bin/cat" || d.ev.Exec.Argv0 != "cat" ||
		d.ev.Seq != 7 || d.ev.TimeNS != 123456 || d.ev.CgroupID != 99 || d.ev.PID != 1000 || d.ev.TID != 1001 || d.ev.Comm != "worker" {
		t.Errorf("exec: %+v %+v, %v", d.ev, d.ev.Exec, err)
	}
	d, err = decodeRecord(record(1, 0, le32(10, 11, 10, 12, 1), "", ""))
	if err != nil || *d.ev.Fork != (event.Fork{ParentPID: 10, ParentTID: 11, ChildPID: 10, ChildTID: 12, Thread: true}) {
		t.Errorf("fork: %+v, %v", d.ev.Fork, err)
	}
	d, err = decodeRecord(record(2, 0, le32(3<<8, 1), "", ""))
	if err != nil || *d.ev.Exit != (event.Exit{Code: 3, GroupDead: true}) {
		t.Errorf("exit code: %+v, %v", d.ev.Exit, err)
	}
	d, err = decodeRecord(record(2, 0, le32(9, 0), "", ""))
	if err != nil || *d.ev.Exit != (event.Exit{Signal: 9}) {
		t.Errorf("exit signal: %+v, %v", d.ev.Exit, err)
	}

	open := make([]byte, 32)
	binary.LittleEndian.PutUint32(open[0:], uint32(0xffffff9c)) // AT_FDCWD
	binary.LittleEndian.PutUint32(open[4:], sysOpenat2)
	binary.LittleEndian.PutUint64(open[8:], 0o2|0o100|0o2000) // O_RDWR|O_CREAT|O_APPEND
	binary.LittleEndian.PutUint64(open[16:], 0o600)
	binary.LittleEndian.PutUint64(open[24:], uint64(0xfffffffffffffffe)) // -ENOENT
	d, err = decodeRecord(record(3, flagTrunc1, open, "a/b", ""))
	want := event.Open{Syscall: "openat2", Dirfd: -100, Path: "a/b", Flags: 0o2102, Mode: 0o600, Ret: -2,
		Access: event.AccessReadWrite, Create: true, Append: true, PathTruncated: true}
	if err != nil || *d.ev.Open != want {
		t.Errorf("open: %+v, %v", d.ev.Open, err)
	}

	conn := make([]byte, 32)
	binary.LittleEndian.PutUint16(conn[4:], 10)
	binary.LittleEndian.PutUint16(conn[6:], 443)
	conn[8+15] = 1
	binary.LittleEndian.PutUint64(conn[24:], uint64(0xffffffffffffff91)) // -111
	d, err = decodeRecord(record(4, 0, conn, "", ""))
	if err != nil || *d.ev.Connect != (event.Connect{Family: "inet6", Addr: "::1", Port: 443, Ret: -111}) {
		t.Errorf("connect: %+v, %v", d.ev.Connect, err)
	}
	binary.LittleEndian.PutUint16(conn[4:], 1)
	d, err = decodeRecord(record(4, 0, conn, "\x00abstract\x00\x00", ""))
	if err != nil || d.ev.Connect.Family != "unix" || d.ev.Connect.Addr != "@abstract" {
		t.Errorf("abstract unix connect: %+v, %v", d.ev.Connect, err)
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	good := record(0, 0, nil, "x", "y")
	cases := map[string][]byte{
		"short":        good[:recFixedSize-1],
		"unknown kind": record(9, 0, nil, "", ""),
		"length":       good[:len(good)-1],
	}
	for name, b := range cases {
		if _, err := decodeRecord(b); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want a one-line error", name, err)
		}
	}
	// Kind indices must follow VIGIL_KIND_* in bpf/capture.h and cover
	// every event kind.
	if len(kindByIndex) != len(event.Kinds) {
		t.Errorf("%d kernel kinds, %d event kinds", len(kindByIndex), len(event.Kinds))
	}
	want := []event.Kind{event.KindExec, event.KindFork, event.KindExit, event.KindOpen, event.KindConnect}
	for i, k := range want {
		if kindByIndex[i] != k {
			t.Errorf("kind index %d = %s, want %s", i, kindByIndex[i], k)
		}
	}
}
