package derive

import "testing"

// BenchmarkDerive derives GLM-4.5's syntax through the Go engine (about
// twenty renders of its template plus the diffs), as `templates inspect`
// and a session start do once per template.
func BenchmarkDerive(b *testing.B) {
	var e suiteEntry
	for _, x := range loadSuite(b) {
		if x.ID == "zai-org-GLM-4.5" {
			e = x
		}
	}
	r := compileSuite(b, e)
	for b.Loop() {
		if _, err := Derive(r, Tokens{EOS: e.token("eos_token")}); err != nil {
			b.Fatal(err)
		}
	}
}
