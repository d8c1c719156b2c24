package evidence

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"vigil/internal/wire"
)

// Limits of SDK log ingestion. A line longer than MaxSDKLine or beyond
// MaxSDKEvents is not ingested and is reported as a problem; at most
// MaxSDKProblems problems are listed, followed by one line counting the rest.
const (
	MaxSDKLine     = 64 << 10
	MaxSDKEvents   = 1 << 20
	MaxSDKProblems = 50
)

// ReadSDKLog ingests a workload's SDK event log strictly. A line is
// accepted into events when it is valid JSON that validates against the
// sdk-event schema (which fixes the known types) and carries runID. Every
// other defect is a problem: rejected lines, a seq that is not the next
// one counting from 0, a duplicate or unknown tool call id, a completion
// before its start, a tool call never completed, anything after
// run_finished. problems are one-line strings naming the 1-based line.
// A read error is a problem too, never a silent truncation.
func ReadSDKLog(r io.Reader, runID string) (events []wire.SDK, problems []string) {
	p := &problemList{}
	br := bufio.NewReaderSize(r, 64<<10)
	st := pairing{open: map[string]wire.SDK{}, done: map[string]bool{}}
	line := 0
	var nextSeq uint64
	for {
		raw, tooLong, err := readLine(br)
		if err != nil && err != io.EOF {
			p.addf("line %d: read error: %v", line+1, err)
			break
		}
		if err == io.EOF && raw == nil {
			break
		}
		line++
		switch {
		case tooLong:
			p.addf("line %d: longer than %d bytes; not ingested", line, MaxSDKLine)
		case len(bytes.TrimSpace(raw)) == 0:
			p.addf("line %d: empty line", line)
		case len(events) >= MaxSDKEvents:
			p.addf("line %d: more than %d events; not ingested", line, MaxSDKEvents)
		default:
			ev, msg := parseSDKLine(raw, runID)
			if msg != "" {
				p.addf("line %d: %s", line, msg)
				break
			}
			if ev.Seq != nextSeq {
				p.addf("line %d: seq %d, want %d", line, ev.Seq, nextSeq)
			}
			nextSeq = ev.Seq + 1
			if msg := st.observe(ev); msg != "" {
				p.addf("line %d: %s", line, msg)
			}
			events = append(events, ev)
		}
		if err == io.EOF {
			break
		}
	}
	for _, id := range st.order {
		if _, open := st.open[id]; open {
			p.addf("tool call %q started (seq %d) but never completed", id, st.open[id].Seq)
		}
	}
	return events, p.list()
}

func parseSDKLine(raw []byte, runID string) (wire.SDK, string) {
	var ev wire.SDK
	if err := wire.Validate("sdk-event", raw); err != nil {
		return ev, err.Error()
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		return ev, "not an SDK event: " + err.Error()
	}
	if ev.RunID != runID {
		return ev, fmt.Sprintf("run_id %q, want %q", ev.RunID, runID)
	}
	return ev, ""
}

// pairing tracks tool_call_started/completed and run_finished order.
type pairing struct {
	open     map[string]wire.SDK
	done     map[string]bool
	order    []string
	finished bool
}

func (s *pairing) observe(ev wire.SDK) string {
	if s.finished {
		return ev.Type + " after run_finished"
	}
	id := ev.ToolCallID
	switch ev.Type {
	case wire.SDKToolCallStarted:
		if _, open := s.open[id]; open || s.done[id] {
			return fmt.Sprintf("tool call %q started twice", id)
		}
		s.open[id] = ev
		s.order = append(s.order, id)
	case wire.SDKToolCallCompleted:
		start, open := s.open[id]
		switch {
		case s.done[id]:
			return fmt.Sprintf("tool call %q completed twice", id)
		case !open:
			return fmt.Sprintf("tool call %q completed without a start", id)
		}
		delete(s.open, id)
		s.done[id] = true
		if ev.MonoNS < start.MonoNS {
			return fmt.Sprintf("tool call %q completed at mono_ns %d, before its start at %d", id, ev.MonoNS, start.MonoNS)
		}
	case wire.SDKRunFinished:
		s.finished = true
	}
	return ""
}

// readLine returns the next line without its newline. Lines longer than
// MaxSDKLine are consumed to their end and reported as tooLong.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > MaxSDKLine+1 {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			return bytes.TrimSuffix(buf, []byte("\n")), tooLong, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == io.EOF:
			if len(buf) == 0 && !tooLong {
				return nil, false, io.EOF
			}
			return buf, tooLong, io.EOF
		default:
			return nil, false, err
		}
	}
}

// problemList keeps the first MaxSDKProblems problems and counts the rest.
type problemList struct {
	items []string
	more  int
}

func (p *problemList) addf(format string, args ...any) {
	if len(p.items) >= MaxSDKProblems {
		p.more++
		return
	}
	p.items = append(p.items, fmt.Sprintf(format, args...))
}

func (p *problemList) list() []string {
	out := p.items
	if p.more > 0 {
		out = append(out, fmt.Sprintf("%d more problems not listed", p.more))
	}
	return out
}
