package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolharness/toolharness/bench"
)

// chromium finds the headless browser; its absence is a failure, not a
// skip: the HTML report is only tested by rendering it.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found: run make deps (installs Debian's chromium), or set CHROMIUM to the browser binary")
	return ""
}

func runChromium(t *testing.T, args ...string) string {
	t.Helper()
	bin := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--no-first-run", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, errOut.String())
	}
	return out.String()
}

func TestHTMLRendersInChromium(t *testing.T) {
	dir := t.TempDir()
	s := bench.Summarize(fixture())
	if err := WriteAll(dir, s, Meta{Title: "fixture report", Source: "report_test.go"}); err != nil {
		t.Fatal(err)
	}
	page := "file://" + filepath.Join(dir, ReportHTML)
	dom := runChromium(t, "--dump-dom", page)

	for _, id := range []string{"chart-failure", "chart-retries", "chart-latency", "summary", "success", "kinds", "comparisons"} {
		if !strings.Contains(dom, `id="`+id+`"`) {
			t.Errorf("rendered DOM has no #%s", id)
		}
	}
	count := func(re string) int { return len(regexp.MustCompile(re).FindAllStringIndex(dom, -1)) }
	// One strict and one lenient bar per group, plus the legend swatch.
	if n := count(`<rect class="bar strict"`); n != len(s.Groups)+1 {
		t.Errorf("%d strict bars, want %d", n, len(s.Groups)+1)
	}
	if n := count(`<rect class="bar lenient"`); n != len(s.Groups)+1 {
		t.Errorf("%d lenient bars, want %d", n, len(s.Groups)+1)
	}
	if n := count(`<rect class="bar p95"`); n != len(s.Groups)+1 {
		t.Errorf("%d latency p95 bars, want %d", n, len(s.Groups)+1)
	}
	if n := count(`<rect class="bar (first|r1|r2|r3|failed)"`); n < len(s.Groups) {
		t.Errorf("%d retry segments, want at least one per group", n)
	}
	if n := count(`<tr><td class="l">`); n != 3*len(s.Groups)+len(s.Comparisons) {
		t.Errorf("%d table rows, want %d", n, 3*len(s.Groups)+len(s.Comparisons))
	}
	// The escaped model name is text, not markup, after parsing.
	if strings.Contains(dom, "<b>tiny</b>") || !strings.Contains(dom, "&lt;b&gt;tiny&lt;/b&gt; &amp; co") {
		t.Error("a model name became markup in the rendered page")
	}
	if shot := os.Getenv("BENCH_SCREENSHOT"); shot != "" {
		runChromium(t, "--screenshot="+shot, "--window-size=1040,1400", "--hide-scrollbars", page)
	}
}

// brokenWords is a script that lists, in the body's data-broken
// attribute, every word of a table cell the browser laid out over more
// than one line.
const brokenWords = `<script>
const broken = [];
for (const cell of document.querySelectorAll("td, th")) {
  const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    for (const m of n.data.matchAll(/\S+/g)) {
      const r = document.createRange();
      r.setStart(n, m.index);
      r.setEnd(n, m.index + m[0].length);
      const tops = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
      if (tops.size > 1) broken.push(m[0]);
    }
  }
}
document.body.setAttribute("data-broken", broken.join(" | ") || "none");
</script>`

// TestHTMLWordsNeverBreak lays the report out in a narrow window and
// checks that no word of any table is split over two lines ("record ed").
func TestHTMLWordsNeverBreak(t *testing.T) {
	dir := t.TempDir()
	var recs []bench.Record
	for _, r := range longNames() {
		r.Mode = "recorded"
		recs = append(recs, r)
	}
	var page strings.Builder
	if err := HTML(&page, bench.Summarize(recs), Meta{Title: "words", Manifest: fixtureManifest(3)}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "page.html")
	if err := os.WriteFile(path, []byte(strings.Replace(page.String(), "</body>", brokenWords+"</body>", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := runChromium(t, "--window-size=640,900", "--dump-dom", "file://"+path)
	m := regexp.MustCompile(`data-broken="([^"]*)"`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the check did not run:\n%.2000s", dom)
	}
	if m[1] != "none" {
		t.Errorf("words broken over two lines: %s", m[1])
	}
}
