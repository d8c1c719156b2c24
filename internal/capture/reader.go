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

// readerState is owned by the reader goroutine until done is closed,
// except pass, whose sink side belongs to its own goroutine until the
// reader closes it.
type readerState struct {
	dec          decoder
	cur          *block // the block being decoded into
	order        orderer
	records      uint64 // raw records taken from the ring, decodable or not
	decodeErrors uint64
	firstDecode  error
	faults       uint64 // records with a string read only in part (fault or clip)

	pass *passer

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

// newReaderState reads for a ring of ringSize bytes and passes the events
// on, in seq order, to sink (nil: they are kept for Finish).
func newReaderState(ringSize int, sink func([]wire.Kernel), gen uint32) *readerState {
	s := &readerState{
		dec:      decoder{gen: uint16(gen)},
		finishCh: make(chan drainRequest, 1),
		done:     make(chan struct{}),
		outcome:  drainOutcome{detail: "reader stopped before the drain was requested"},
		pass:     newPasser(sink),
	}
	s.order = orderer{
		// Every record that overtakes another is in the ring with it,
		// and none is smaller than its fixed part; a block being
		// decoded and one being pushed may add to them.
		limit:    ringSize/recFixedSize + 2*blockEvents,
		emit:     s.pass.send,
		newBlock: s.pass.block,
		recycle:  s.pass.recycle,
	}
	return s
}

func (s *readerState) wait() { <-s.done }

// handle decodes one record straight into the next event slot.
func (s *readerState) handle(raw []byte) {
	s.records++
	if s.cur == nil {
		s.cur = s.pass.block()
	}
	b := s.cur
	b.ev = b.ev[:len(b.ev)+1]
	ev := &b.ev[len(b.ev)-1]
	*ev = wire.Kernel{} // the block may be reused
	incomplete, err := s.dec.decodeInto(ev, raw)
	if err != nil {
		b.ev = b.ev[:len(b.ev)-1]
		s.decodeErrors++
		if s.firstDecode == nil {
			s.firstDecode = err
		}
		if seq, ok := seqOf(raw); ok {
			s.order.skip(seq)
		}
		return
	}
	if incomplete {
		s.faults++
	}
	if len(b.ev) == cap(b.ev) {
		s.cur = nil
		s.order.push(b)
	}
}

// end passes on every event still held: the reader is done.
func (s *readerState) end() {
	if s.cur != nil {
		s.order.push(s.cur)
		s.cur = nil
	}
	s.order.flush()
	s.pass.close()
}

// passer hands in-order blocks from the reader to the goroutine that
// gives them to the sink, so that the reader goes back to the ring while
// the sink works. The reader waits only when the sink is a long way
// behind (passQueue blocks); the ring then fills, and the kernel counts
// what it cannot emit.
type passer struct {
	queue chan *block
	free  chan *block
	sink  func([]wire.Kernel)
	done  chan struct{}
	// kept holds the blocks when there is no sink.
	kept []*block
	n    int
	// firstGap is the first event whose seq is not its index.
	firstGap string
}

// passQueue is how many blocks may wait for the sink.
const passQueue = 256

func newPasser(sink func([]wire.Kernel)) *passer {
	p := &passer{queue: make(chan *block, passQueue), free: make(chan *block, 32), sink: sink, done: make(chan struct{})}
	go p.run()
	return p
}

func (p *passer) run() {
	defer close(p.done)
	for b := range p.queue {
		if p.firstGap == "" {
			for i := range b.ev {
				if b.ev[i].Seq != uint64(p.n+i) {
					p.firstGap = fmt.Sprintf("sequence gap: record %d carries seq %d", p.n+i, b.ev[i].Seq)
					break
				}
			}
		}
		p.n += len(b.ev)
		if p.sink == nil {
			p.kept = append(p.kept, b)
			continue
		}
		p.sink(b.ev)
		p.recycle(b)
	}
}

func (p *passer) send(b *block) {
	if len(b.ev) == 0 {
		p.recycle(b)
		return
	}
	p.queue <- b
}

// block returns an empty block, reused when one is free.
func (p *passer) block() *block {
	select {
	case b := <-p.free:
		b.ev = b.ev[:0]
		return b
	default:
		return &block{ev: make([]wire.Kernel, 0, blockEvents)}
	}
}

func (p *passer) recycle(b *block) {
	if p.sink == nil {
		return
	}
	select {
	case p.free <- b:
	default:
	}
}

// close waits until the sink has every block.
func (p *passer) close() {
	close(p.queue)
	<-p.done
}

// events returns the events kept (no sink), in one slice. The copy
// touches memory for the first time, which costs more than the copying
// (page faults), so the blocks are copied side by side, one per CPU at
// a time.
func (p *passer) events() []wire.Kernel {
	out := make([]wire.Kernel, p.n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	off := 0
	for _, b := range p.kept {
		wg.Add(1)
		sem <- struct{}{}
		go func(dst []wire.Kernel) {
			defer wg.Done()
			copy(dst, b.ev)
			<-sem
		}(out[off : off+len(b.ev)])
		off += len(b.ev)
	}
	wg.Wait()
	p.kept = nil
	return out
}

// run reads records until Close, or until Finish flushes the reader and the
// drain ends. With a waiter, reads never block: the waiter parks the
// goroutine between them.
func (s *readerState) run(rd *ringbuf.Reader, w *ringWaiter) {
	defer close(s.done)
	defer s.end()
	if w != nil {
		defer w.close()
	}
	var rec ringbuf.Record
	pending := func() bool { return rd.AvailableBytes() > 0 }
	if w != nil {
		rd.SetDeadline(time.Unix(1, 0))
	} else {
		rd.SetDeadline(time.Now().Add(readPoll))
	}
	for {
		err := rd.ReadInto(&rec)
		switch {
		case err == nil:
			s.handle(rec.RawSample)
		case errors.Is(err, os.ErrDeadlineExceeded) && w != nil:
			w.wait(readPoll, pending)
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
