// Package report writes a bench.Summary as summary.json, summary.csv,
// summary.md and report.html (one self-contained page: inline CSS and SVG
// charts, no script, no network), and as the terminal table the commands
// print.
//
// Rates print as "12.3% [8.1–17.9]": the point estimate and its 95% Wilson
// interval; a dash means the rate has no denominator in that group (no
// case of that kind).
package report
