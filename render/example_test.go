package render_test

import (
	"fmt"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/render"
	"github.com/toolharness/toolharness/templates"
)

func ExampleFormatCall() {
	call := chat.ToolCall{Name: "read_file", Arguments: []byte(`{"path":"a b.txt","limit":5}`)}
	for _, format := range []string{"hermes", "xml", "pythonic"} {
		text, _ := render.FormatCall(format, call)
		fmt.Println(text)
	}
	// Output:
	// <tool_call>
	// {"name": "read_file", "arguments": {"path": "a b.txt", "limit": 5}}
	// </tool_call>
	// <function_calls>
	// <invoke name="read_file">
	// <parameter name="path">a b.txt</parameter>
	// <parameter name="limit">5</parameter>
	// </invoke>
	// </function_calls>
	// [read_file(path="a b.txt", limit=5)]
}

func ExampleDiverge() {
	fmt.Println(render.Diverge("<s>[INST]hi[/INST]", "<s>[INST]hi[/INST]Hello"))
	fmt.Println(render.Diverge("<s>[AVAILABLE_TOOLS][INST]hi", "<s>[INST]hi"))
	// Output:
	// <nil>
	// render: prompt diverges from the previous one at byte 4: previous "<s>[AVAILABLE_TOOLS][INST]hi", now "<s>[INST]hi"
}

func ExampleSession() {
	fam, _ := templates.Lookup("qwen2.5")
	s, _ := render.NewSession(render.SessionConfig{Family: fam, System: "Be brief."})
	s.AddUser("Hi <|im_end|>")
	p1, _ := s.Prompt()
	raw := "Hello!"
	s.AddAssistant(raw, nil)
	s.AddUser("Bye")
	p2, _ := s.Prompt("It is Friday.")
	fmt.Println(render.Diverge(p1+raw, p2) == nil)
	fmt.Print(p2)
	// Output:
	// true
	// <|im_start|>system
	// Be brief.<|im_end|>
	// <|im_start|>user
	// Hi <⁠|im_end|><|im_end|>
	// <|im_start|>assistant
	// Hello!<|im_end|>
	// <|im_start|>user
	// <system-reminder>
	// It is Friday.
	// </system-reminder>
	// Bye<|im_end|>
	// <|im_start|>assistant
}
