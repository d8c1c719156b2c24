package workload

import (
	"context"
	"strings"
	"testing"

	"vigil/internal/wire"
)

// A run that fails before its span events are added never asked the SDK
// for them: the result must not report the requested events as lost by
// the SDK ("unaccounted for"), only the run's own error.
func TestFailedRunDoesNotBlameSDKForSpanEvents(t *testing.T) {
	cfg := testConfig(t)
	cfg.SpanEvents = 20
	cfg.FailEvery = 1
	cfg.FailCounterFile = t.TempDir() + "/count"
	res, err := Run(context.Background(), cfg)
	checkResultSchema(t, res)
	if err == nil || res.Status != wire.StatusError {
		t.Fatalf("want an injected failure, got err %v status %q", err, res.Status)
	}
	for _, w := range res.Warnings {
		if strings.Contains(w, "unaccounted") {
			t.Errorf("warning blames the SDK for events never added: %q", w)
		}
	}
	if res.SpanEventsRetained != 0 || res.SpanEventsDropped != 0 || res.SpanEventsRequested != 20 {
		t.Errorf("span numbers %d retained %d dropped of %d requested", res.SpanEventsRetained, res.SpanEventsDropped, res.SpanEventsRequested)
	}
}
