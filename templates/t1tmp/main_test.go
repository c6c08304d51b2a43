package t1
import ("testing";"github.com/ardanlabs/jinja")
func TestX(t *testing.T){
 for _, src := range []string{
  "a\n", "a\n\n", "{%+ if true +%}\n  x{%+ endif +%}\n", "  {%+ if true +%}x{%+ endif +%}",
 } {
 tm, err := jinja.Compile(src); if err!=nil {t.Log(err);continue}
 out, err := tm.RenderValues(map[string]jinja.Value{})
 t.Logf("%q %v", out, err)
 }
}
