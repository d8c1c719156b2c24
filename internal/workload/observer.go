package workload

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// rootObserver is a span processor that reads the SDK's own data for the
// root span at End: how many pressure events the SDK retained, how many it
// dropped, and which indexes survived. It also counts ended spans.
type rootObserver struct {
	mu       sync.Mutex
	ended    int
	seen     bool
	retained int
	dropped  int
	first    int
	last     int
}

func newRootObserver() *rootObserver { return &rootObserver{first: -1, last: -1} }

func (o *rootObserver) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (o *rootObserver) OnEnd(s sdktrace.ReadOnlySpan) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended++
	// The run's root is the local root: no parent, or a remote one (the
	// TRACEPARENT vigil record hands down).
	if s.Parent().IsValid() && !s.Parent().IsRemote() || s.Name() != RootSpanName {
		return
	}
	o.seen = true
	o.dropped = s.DroppedEvents()
	for _, ev := range s.Events() {
		if ev.Name != SpanEventName {
			continue
		}
		o.retained++
		idx, ok := eventIndex(ev.Attributes)
		if !ok {
			continue
		}
		if o.first < 0 {
			o.first = idx
		}
		o.last = idx
	}
}

func eventIndex(kvs []attribute.KeyValue) (int, bool) {
	for _, kv := range kvs {
		if kv.Key == AttrEventIndex && kv.Value.Type() == attribute.INT64 {
			return int(kv.Value.AsInt64()), true
		}
	}
	return 0, false
}

func (o *rootObserver) Shutdown(context.Context) error   { return nil }
func (o *rootObserver) ForceFlush(context.Context) error { return nil }

type rootStats struct {
	ended, retained, dropped, first, last int
	seen                                  bool
}

func (o *rootObserver) stats() rootStats {
	o.mu.Lock()
	defer o.mu.Unlock()
	return rootStats{o.ended, o.retained, o.dropped, o.first, o.last, o.seen}
}
