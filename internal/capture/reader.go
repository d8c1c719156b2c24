//go:build linux

package capture

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/cilium/ebpf/ringbuf"

	"vigil/internal/wire"
)

// drainPoll bounds each wait for the producer's wakeup during the drain, so
// the kernel counters and the caller's context are re-checked even if a
// wakeup is coalesced away. It is a poll timeout, not a sleep: data ends
// the wait at once.
const drainPoll = 5 * time.Millisecond

// readPoll is how long the reader waits for a kernel wakeup before it looks
// at the ring anyway. The kernel wakes it only when a good part of the
// ring is filled (see wakeup_bytes in bpf/capture.bpf.c), which spares
// the traced tasks a wakeup per event; the timer bounds how long a small
// batch of events waits to be read.
const readPoll = 10 * time.Millisecond

// readerState is owned by the reader goroutine until done is closed.
type readerState struct {
	events       eventStore
	dec          decoder
	records      uint64 // raw records taken from the ring, decodable or not
	decodeErrors uint64
	firstDecode  error
	faults       uint64 // records with a string read only in part (fault or clip)

	finishCh chan drainRequest
	done     chan struct{}
	outcome  drainOutcome
}

type drainRequest struct {
	ctx     context.Context
	emitted func() (uint64, error) // kernel-side emission count
}

type drainOutcome struct {
	proven bool
	detail string
}

func newReaderState() *readerState {
	return &readerState{
		finishCh: make(chan drainRequest, 1),
		done:     make(chan struct{}),
		outcome:  drainOutcome{detail: "reader stopped before the drain was requested"},
	}
}

func (s *readerState) wait() { <-s.done }

// handle decodes one record straight into the next event slot.
func (s *readerState) handle(raw []byte) {
	s.records++
	fault, err := s.dec.decodeInto(s.events.next(), raw)
	if err != nil {
		s.events.drop()
		s.decodeErrors++
		if s.firstDecode == nil {
			s.firstDecode = err
		}
		return
	}
	if fault {
		s.faults++
	}
}

// eventStore appends events in chunks, so a growing capture never copies
// what it already holds; all copies them once into one slice.
type eventStore struct {
	full []([]wire.Kernel)
	cur  []wire.Kernel
	n    int
}

const (
	firstChunk = 1 << 10
	maxChunk   = 1 << 16
)

// next returns a fresh slot for one more event.
func (s *eventStore) next() *wire.Kernel {
	if len(s.cur) == cap(s.cur) {
		if s.cur != nil {
			s.full = append(s.full, s.cur)
		}
		s.cur = make([]wire.Kernel, 0, min(max(2*cap(s.cur), firstChunk), maxChunk))
	}
	s.cur = s.cur[:len(s.cur)+1]
	s.n++
	return &s.cur[len(s.cur)-1]
}

// drop removes the slot next returned last.
func (s *eventStore) drop() {
	s.cur = s.cur[:len(s.cur)-1]
	s.n--
}

// all returns the events in one slice. The copy touches memory for the
// first time, which costs more than the copying (page faults), so the
// chunks are copied side by side, one per CPU at a time.
func (s *eventStore) all() []wire.Kernel {
	out := make([]wire.Kernel, s.n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	off := 0
	for _, c := range append(s.full[:len(s.full):len(s.full)], s.cur) {
		wg.Add(1)
		sem <- struct{}{}
		go func(dst []wire.Kernel) {
			defer wg.Done()
			copy(dst, c)
			<-sem
		}(out[off : off+len(c)])
		off += len(c)
	}
	wg.Wait()
	return out
}

// run reads records until Close, or until Finish flushes the reader and the
// drain ends.
func (s *readerState) run(rd *ringbuf.Reader) {
	defer close(s.done)
	var rec ringbuf.Record
	rd.SetDeadline(time.Now().Add(readPoll))
	for {
		err := rd.ReadInto(&rec)
		switch {
		case err == nil:
			s.handle(rec.RawSample)
		case errors.Is(err, os.ErrDeadlineExceeded):
			rd.SetDeadline(time.Now().Add(readPoll))
		case errors.Is(err, ringbuf.ErrFlushed):
			// Finish queues its request before it flushes.
			s.outcome = s.drain(rd, <-s.finishCh)
			return
		case errors.Is(err, os.ErrClosed), errors.Is(err, ringbuf.ErrClosed):
			s.outcome = drainOutcome{detail: "capture closed before the drain"}
			return
		default:
			s.outcome = drainOutcome{detail: fmt.Sprintf("ring buffer read failed: %v", err)}
			return
		}
	}
}

// drain reads until the ring is empty and every record the kernel counted
// as emitted has been read. The caller guarantees that no session task can
// emit any more, so the kernel count is final.
func (s *readerState) drain(rd *ringbuf.Reader, req drainRequest) drainOutcome {
	var rec ringbuf.Record
	for {
		// Non-blocking pass over everything currently in the ring.
		rd.SetDeadline(time.Now())
		for {
			err := rd.ReadInto(&rec)
			if err == nil {
				s.handle(rec.RawSample)
				continue
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			return drainOutcome{detail: fmt.Sprintf("ring buffer read failed during drain: %v", err)}
		}
		emitted, err := req.emitted()
		if err != nil {
			return drainOutcome{detail: fmt.Sprintf("read kernel emission counters: %v", err)}
		}
		switch {
		case s.records == emitted && rd.AvailableBytes() == 0:
			return drainOutcome{proven: true}
		case s.records > emitted:
			return drainOutcome{detail: fmt.Sprintf("read %d records but the kernel counted only %d emissions", s.records, emitted)}
		}
		if err := req.ctx.Err(); err != nil {
			return drainOutcome{detail: fmt.Sprintf("drain stopped (%v) after reading %d of %d emitted records", err, s.records, emitted)}
		}
		// Block until the producer's next wakeup (or the poll bound).
		deadline := time.Now().Add(drainPoll)
		if d, ok := req.ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		rd.SetDeadline(deadline)
		err = rd.ReadInto(&rec)
		switch {
		case err == nil:
			s.handle(rec.RawSample)
		case errors.Is(err, os.ErrDeadlineExceeded):
		default:
			return drainOutcome{detail: fmt.Sprintf("ring buffer read failed during drain: %v", err)}
		}
	}
}
