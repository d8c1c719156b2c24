package evidence_test

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/wire"
)

func sdkLines(t *testing.T, evs []wire.SDK) []string {
	t.Helper()
	var out []string
	for _, e := range evs {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func TestReadSDKLogGood(t *testing.T) {
	evs := evidencetest.SDK(4, 40, 1000)
	lines := sdkLines(t, evs)
	// No trailing newline on the last line is fine.
	got, problems := evidence.ReadSDKLog(strings.NewReader(strings.Join(lines, "\n")), evidencetest.RunID)
	if len(problems) != 0 {
		t.Fatalf("problems: %q", problems)
	}
	if !reflect.DeepEqual(got, evs) {
		t.Fatalf("events differ:\n%+v\n%+v", got, evs)
	}
	got, problems = evidence.ReadSDKLog(strings.NewReader(""), evidencetest.RunID)
	if got != nil || problems != nil {
		t.Fatalf("empty log: %v %v", got, problems)
	}
}

func TestReadSDKLogProblems(t *testing.T) {
	good := sdkLines(t, evidencetest.SDK(2, 20, 1000)) // started0 completed0 started1 completed1 finished
	replace := func(i int, from, to string) func([]string) []string {
		return func(l []string) []string {
			if !strings.Contains(l[i], from) {
				t.Fatalf("line %d has no %q", i, from)
			}
			l[i] = strings.Replace(l[i], from, to, 1)
			return l
		}
	}
	cases := []struct {
		name     string
		mod      func([]string) []string
		accepted int
		want     []string // one substring per problem, in order
	}{
		{"malformed json", func(l []string) []string { l[1] = `{"schema":"vigil.sdk-event/v1",`; return l }, 4,
			[]string{"line 2: not valid JSON", "line 3: seq 2, want 1", `tool call "call_000" started (seq 0) but never completed`}},
		{"out-of-order seq", func(l []string) []string { l[1], l[2] = l[2], l[1]; return l }, 5,
			[]string{"line 2: seq 2, want 1", "line 3: seq 1, want 3", "line 4: seq 3, want 2"}},
		{"wrong run id", replace(2, evidencetest.RunID, "someone-else"), 4,
			[]string{`line 3: run_id "someone-else", want "` + evidencetest.RunID + `"`, "line 4: seq 3, want 2", `"call_001" completed without a start`}},
		{"unknown type", replace(4, "run_finished", "run_exploded"), 4,
			[]string{"line 5: at /type: value must be one of"}},
		{"unknown field", replace(0, `"pid"`, `"extra":1,"pid"`), 4,
			[]string{"line 1: at /: additional properties 'extra' not allowed", "line 2: seq 1, want 0", `line 2: tool call "call_000" completed without a start`}},
		{"unpaired start", func(l []string) []string { return append(l[:3], strings.Replace(l[4], `"seq":4`, `"seq":3`, 1)) }, 4,
			[]string{`tool call "call_001" started (seq 2) but never completed`}},
		{"duplicate start", replace(2, "call_001", "call_000"), 5,
			[]string{`line 3: tool call "call_000" started twice`, `line 4: tool call "call_001" completed without a start`}},
		{"completed twice", replace(3, "call_001", "call_000"), 5,
			[]string{`line 4: tool call "call_000" completed twice`, `"call_001" started (seq 2) but never completed`}},
		{"completion before start", replace(1, `"mono_ns":10000`, `"mono_ns":999`), 5,
			[]string{`line 2: tool call "call_000" completed at mono_ns 999, before its start at 1000`}},
		{"event after run_finished", func(l []string) []string {
			extra := strings.Replace(strings.Replace(l[4], `"seq":4`, `"seq":5`, 1), "run_finished", "run_finished", 1)
			return append(l, extra)
		}, 6, []string{"line 6: run_finished after run_finished"}},
		{"empty line", func(l []string) []string { return append(l[:2], append([]string{""}, l[2:]...)...) }, 5,
			[]string{"line 3: empty line"}},
		{"long line", func(l []string) []string {
			return append([]string{strings.Repeat("x", evidence.MaxSDKLine+10)}, l...)
		}, 5, []string{"line 1: longer than 65536 bytes; not ingested"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lines := c.mod(append([]string(nil), good...))
			evs, problems := evidence.ReadSDKLog(strings.NewReader(strings.Join(lines, "\n")+"\n"), evidencetest.RunID)
			if len(evs) != c.accepted {
				t.Errorf("accepted %d events, want %d", len(evs), c.accepted)
			}
			if len(problems) != len(c.want) {
				t.Fatalf("problems = %q, want %d matching %q", problems, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.Contains(problems[i], w) {
					t.Errorf("problem %d = %q, want it to contain %q", i, problems[i], w)
				}
				if strings.Contains(problems[i], "\n") {
					t.Errorf("problem %d is not one line: %q", i, problems[i])
				}
			}
		})
	}
}

func TestReadSDKLogCapsProblems(t *testing.T) {
	var b strings.Builder
	for i := 0; i < evidence.MaxSDKProblems+25; i++ {
		b.WriteString("not json\n")
	}
	evs, problems := evidence.ReadSDKLog(strings.NewReader(b.String()), "r")
	if len(evs) != 0 || len(problems) != evidence.MaxSDKProblems+1 {
		t.Fatalf("%d events, %d problems", len(evs), len(problems))
	}
	if last := problems[len(problems)-1]; last != "25 more problems not listed" {
		t.Fatalf("last problem = %q", last)
	}
}

type failingReader struct{ r io.Reader }

func (f failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errors.New("disk on fire")
	}
	return n, err
}

func TestReadSDKLogReadError(t *testing.T) {
	lines := sdkLines(t, evidencetest.SDK(1, 10, 1000))
	evs, problems := evidence.ReadSDKLog(failingReader{strings.NewReader(strings.Join(lines, "\n") + "\n")}, evidencetest.RunID)
	if len(evs) != 3 {
		t.Errorf("accepted %d events before the error, want 3", len(evs))
	}
	if len(problems) != 1 || !strings.Contains(problems[0], "read error: disk on fire") {
		t.Fatalf("problems = %q", problems)
	}
}
