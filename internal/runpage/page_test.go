package runpage

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"vigil/internal/evidence"
	"vigil/internal/evidence/evidencetest"
	"vigil/internal/testenv"
	"vigil/internal/wire"
)

func TestBuildCountsWhatTheRunDid(t *testing.T) {
	b := evidencetest.Bundle(40, 2)
	p := Build("run.tar.gz", b)
	// The fixture: the agent (4242) and its child (4243); the runner's
	// clone into the session is not a process of the run.
	if len(p.Processes) != 2 || p.Processes[0].PID != 4242 || p.Processes[0].Program != "/usr/bin/agent" || !p.Processes[1].Ended {
		t.Errorf("processes: %+v", p.Processes)
	}
	if p.Files.Total != len(unionPaths(b.Surface)) {
		t.Errorf("%d file rows, surface has %d distinct paths", p.Files.Total, len(unionPaths(b.Surface)))
	}
	if p.Execs.Total != 1 || p.Endpoints.Total != 1 || p.Endpoints.Rows[0].Endpoint != "inet:127.0.0.1:4318" {
		t.Errorf("execs %+v endpoints %+v", p.Execs, p.Endpoints)
	}
	if len(p.ToolCalls) != 2 || p.ToolCalls[0].Total+p.ToolCalls[1].Total == 0 || len(p.ToolCalls[0].Events) == 0 {
		t.Errorf("tool calls: %+v", p.ToolCalls)
	}
	if !p.Complete || p.BannerClass != "ok" {
		t.Errorf("banner %s %q", p.BannerClass, p.Banner)
	}
	b.Health.KernelLayer.Status = wire.LayerPartial
	if p := Build("run.tar.gz", b); p.Complete || p.BannerClass != "warn" || !strings.Contains(p.Banner, "incomplete") {
		t.Errorf("partial record banner %s %q", p.BannerClass, p.Banner)
	}
	// Complete as captured, but a deletion through io_uring names no file.
	ring := evidencetest.WithExtra(40, 2, "", wire.Kernel{Kind: wire.KindIOUring, Hook: "tp_btf/io_uring_complete",
		IOUring: &wire.IOUring{Opcode: 36, Op: "unlinkat"}})
	if p := Build("run.tar.gz", ring); p.Complete || p.BannerClass != "warn" || !strings.Contains(p.Banner, "1 event(s) acted on files or addresses the record does not name") {
		t.Errorf("io_uring record banner %s %q", p.BannerClass, p.Banner)
	}
}

// unionPaths is every path the surface names for files (the files table
// lists exactly those, plus failed-only names).
func unionPaths(s evidence.CapabilitySurface) map[wire.Bytes]bool {
	m := map[wire.Bytes]bool{}
	for _, l := range [][]wire.Bytes{s.FilesRead, s.FilesWritten, s.FilesCreated, s.OpenFailures, s.FilesDeleted,
		s.DirsCreated, s.LinksCreated, s.ModeChanged, s.FilesTruncated} {
		for _, p := range l {
			m[p] = true
		}
	}
	for _, r := range s.FilesRenamed {
		m[r.From], m[r.To] = true, true
	}
	return m
}

func TestPageIsSelfContainedAndEscaped(t *testing.T) {
	b := evidencetest.Bundle(40, 2)
	b.Run.Argv = []string{"agent", `<script>alert(1)</script>`}
	var buf bytes.Buffer
	if err := Write(&buf, Build("run.tar.gz", b)); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if strings.Contains(page, "<script>alert") {
		t.Error("argv reached the page unescaped")
	}
	for _, bad := range []string{"http://", "https://", "<link", "@import", "src="} {
		if strings.Contains(page, bad) {
			t.Errorf("page references something external: %q", bad)
		}
	}
}

func domInt(t *testing.T, dom, attr string) int {
	t.Helper()
	m := regexp.MustCompile(`<html[^>]* ` + attr + `="(\d+)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no %s in the DOM: %.400q", attr, dom)
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestPageInChromium(t *testing.T) {
	b := evidencetest.Bundle(60, 3)
	p := Build("run.tar.gz", b)
	var buf bytes.Buffer
	if err := Write(&buf, p); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "run.html")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom, _ := testenv.RunChromium(t, "--virtual-time-budget=5000", "--dump-dom", "file://"+file)
	if !strings.Contains(dom, `data-js-ok="1"`) {
		t.Fatalf("the page's script did not run; DOM starts %.400q", dom)
	}
	if strings.Contains(dom, "data-js-errors") {
		t.Fatalf("script error: %.400q", dom)
	}
	for attr, want := range map[string]int{
		"data-rows-files": p.Files.Total, "data-rows-execs": p.Execs.Total, "data-rows-endpoints": p.Endpoints.Total,
		"data-rows-procs": len(p.Processes), "data-lanes": len(p.Processes) + len(p.ToolCalls), "data-visible-files": p.Files.Total,
	} {
		if got := domInt(t, dom, attr); got != want {
			t.Errorf("%s = %d, want %d", attr, got, want)
		}
	}
	// The filter in the address narrows the files table to the matches.
	dom, _ = testenv.RunChromium(t, "--virtual-time-budget=5000", "--dump-dom", "file://"+file+"#files=file-00003")
	if got := domInt(t, dom, "data-visible-files"); got != 1 {
		t.Errorf("filtered to file-00003: %d rows visible, want 1", got)
	}
	if want := fmt.Sprintf(`id="t-files-shown">1 of %d rows match "file-00003"`, p.Files.Total); !strings.Contains(dom, want) {
		t.Errorf("the files table does not say how many rows match: want %s", want)
	}
	shot := filepath.Join(t.TempDir(), "run.png")
	if keep := os.Getenv("VIGIL_RUNPAGE_SCREENSHOT"); keep != "" {
		shot = keep
	}
	testenv.RunChromium(t, "--hide-scrollbars", "--window-size=1280,1800", "--screenshot="+shot, "file://"+file)
	if st, err := os.Stat(shot); err != nil || st.Size() < 20000 {
		t.Errorf("screenshot missing or blank: %v", err)
	}
}
