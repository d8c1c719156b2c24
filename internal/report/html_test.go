package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"vigil/internal/testenv"
)

func TestHTMLStaticShape(t *testing.T) {
	out, s, _ := writeReference(t)
	data, err := os.ReadFile(filepath.Join(out, HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	for _, bad := range []string{"http://", "https://", "<link", "@import", "src="} {
		for _, m := range regexp.MustCompile(regexp.QuoteMeta(bad)).FindAllStringIndex(page, -1) {
			ctx := page[m[0]:min(len(page), m[1]+40)]
			if !strings.HasPrefix(ctx, "http://www.w3.org/2000/svg") {
				t.Errorf("report.html references something external: %q", ctx)
			}
		}
	}
	// Per cell: wall strip, paired differences, two interactions, memory.
	if n, want := strings.Count(page, `<svg class="plot"`), 5*len(s.Runs[0].Cells); n != want {
		t.Errorf("%d plots, want %d", n, want)
	}
}

func TestHTMLInChromium(t *testing.T) {
	out, s, _ := writeReference(t)
	page := filepath.Join(out, HTMLFile)
	dom, logs := testenv.RunChromium(t, "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000", "--dump-dom", "file://"+page)
	if !strings.Contains(dom, `data-js-ok="1"`) {
		t.Fatalf("inline script did not run; DOM starts %.300q", dom)
	}
	if m := regexp.MustCompile(`<html[^>]*data-js-errors="([^"]*)"`).FindStringSubmatch(dom); m != nil {
		t.Errorf("page errors: %s", m[1])
	}
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "CONSOLE") && (strings.Contains(l, "rror") || strings.Contains(l, "Refused")) {
			t.Errorf("console: %s", l)
		}
	}
	m := regexp.MustCompile(`data-plots="(\d+)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatal("no plot count in the DOM")
	}
	want := 5 * len(s.Runs[0].Cells)
	if n, _ := strconv.Atoi(m[1]); n != want {
		t.Errorf("%s plots in the DOM, want %d", m[1], want)
	}
	if c := strings.Count(dom, "<circle"); c < 12*20 {
		t.Errorf("only %d plotted points in the DOM", c)
	}
	// A screenshot renders (kept when VIGIL_REPORT_SCREENSHOT names a file).
	shot := filepath.Join(t.TempDir(), "report.png")
	if keep := os.Getenv("VIGIL_REPORT_SCREENSHOT"); keep != "" {
		shot = keep
	}
	testenv.RunChromium(t, "--hide-scrollbars", "--window-size=1280,3000", "--screenshot="+shot, "file://"+page)
	st, err := os.Stat(shot)
	if err != nil || st.Size() < 20000 {
		t.Errorf("screenshot missing or blank: %v", err)
	}
}
