//go:build linux

package capture

import (
	"os"
	"testing"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/ringbuf"

	"vigil/internal/testenv"
)

// TestRingWaiter checks that the reader parks in the runtime's poller on
// this kernel (a fallback to a blocking read would pass every other test
// and only cost CPU), and that a parked wait ends when it should.
func TestRingWaiter(t *testing.T) {
	testenv.RequireRoot(t)

	t.Run("capture uses it", func(t *testing.T) {
		c, err := Open(Config{CgroupPath: testCgroup(t)})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if c.waiter == nil {
			t.Fatal("the ring's descriptor was not taken by the runtime's poller: the reader blocks in epoll_wait")
		}
	})

	ring, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.RingBuf, MaxEntries: uint32(os.Getpagesize())})
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Close()
	never := func() bool { return false }
	newWaiter := func(t *testing.T) *ringWaiter {
		w, err := newRingWaiter(ring.FD())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { w.close() })
		return w
	}

	t.Run("ready returns at once", func(t *testing.T) {
		w := newWaiter(t)
		mustEnd(t, "wait parked although ready reported data", func() { w.wait(time.Hour, func() bool { return true }) })
	})

	t.Run("deadline ends a wait", func(t *testing.T) {
		w := newWaiter(t)
		mustEnd(t, "wait outlived its deadline", func() { w.wait(20*time.Millisecond, never) })
	})

	t.Run("interrupt ends this wait and every later one", func(t *testing.T) {
		w := newWaiter(t)
		parked := make(chan struct{})
		done := make(chan struct{})
		go func() {
			close(parked)
			w.wait(time.Hour, never)
			close(done)
		}()
		<-parked
		time.Sleep(10 * time.Millisecond) // most likely parked by now; either order must end the wait
		w.interrupt()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("interrupt left the wait parked")
		}
		mustEnd(t, "a wait after interrupt parked", func() { w.wait(time.Hour, never) })
	})

	t.Run("a record in the ring ends a parked wait", func(t *testing.T) {
		// A program that writes one 8-byte record and wakes the ring's
		// readers, run on demand.
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
			Type:    ebpf.SocketFilter,
			License: "MIT",
			Instructions: asm.Instructions{
				asm.Mov.Imm(asm.R1, 42),
				asm.StoreMem(asm.RFP, -8, asm.R1, asm.DWord),
				asm.LoadMapPtr(asm.R1, ring.FD()),
				asm.Mov.Reg(asm.R2, asm.RFP),
				asm.Add.Imm(asm.R2, -8),
				asm.Mov.Imm(asm.R3, 8),
				asm.Mov.Imm(asm.R4, 2), // BPF_RB_FORCE_WAKEUP
				asm.FnRingbufOutput.Call(),
				asm.Mov.Imm(asm.R0, 0),
				asm.Return(),
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		defer prog.Close()
		rd, err := ringbuf.NewReader(ring)
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		w := newWaiter(t)
		checks := 0
		woke := make(chan int)
		go func() {
			w.wait(time.Hour, func() bool { checks++; return rd.AvailableBytes() > 0 })
			woke <- checks
		}()
		time.Sleep(20 * time.Millisecond) // parked, most likely; if not, ready sees the record
		if _, err := prog.Run(&ebpf.RunOptions{Data: make([]byte, 14)}); err != nil {
			t.Fatal(err)
		}
		select {
		case n := <-woke:
			if n < 1 {
				t.Fatalf("wait returned without a ready check")
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the kernel's wake-up of the ring did not reach the parked wait")
		}
		rec, err := rd.Read()
		if err != nil || len(rec.RawSample) != 8 || rec.RawSample[0] != 42 {
			t.Fatalf("ring record = %v, %v; want the program's 8 bytes", rec.RawSample, err)
		}
	})

	t.Run("the descriptor is the waiter's own", func(t *testing.T) {
		w, err := newRingWaiter(ring.FD())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.close(); err != nil {
			t.Fatal(err)
		}
		// Closing the duplicate leaves the ring's descriptor open.
		if _, err := ring.Info(); err != nil {
			t.Fatalf("ring map unusable after the waiter closed: %v", err)
		}
	})
}

// mustEnd fails the test with why unless f returns within 30 s (a bound on
// a hang, not a speed target).
func mustEnd(t *testing.T, why string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal(why)
	}
}
