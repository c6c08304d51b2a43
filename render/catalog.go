package render

import (
	"fmt"
	"strings"

	"github.com/toolharness/toolharness/chat"
	"github.com/toolharness/toolharness/templates"
)

// Catalog is the tool catalog and call instructions in format, as text for
// the system message. JSON inside keeps each schema's own key order and is
// written with Python's separators, as the official templates print it.
func Catalog(format string, tools []chat.Tool) (string, error) {
	if err := checkFormat(format); err != nil {
		return "", err
	}
	// Every tool's parameters are read first, whatever the format writes,
	// so that a bad schema fails alike in all of them. They are read here,
	// not by a helper that returns them, so that a few stay on the stack.
	fns := make([]*chat.Object, len(tools))
	for i, t := range tools {
		params, err := paramsObject(t)
		if err != nil {
			return "", err
		}
		fns[i] = params
	}
	var b strings.Builder
	var err error
	switch format {
	case FormatXML:
		err = xmlCatalog(&b, tools, fns)
	case FormatHermes:
		err = hermesCatalog(&b, tools)
	case FormatJSON:
		err = jsonCatalog(&b, tools)
	case FormatMistral:
		err = mistralCatalog(&b, tools)
	case FormatQwen3Coder:
		err = qwen3CoderCatalog(&b, tools, fns)
	case FormatPythonic:
		err = pythonicCatalog(&b, tools, fns)
	case FormatHarmony:
		harmonyCatalog(&b, tools, fns)
	case FormatTags:
		err = tagsCatalog(&b, tools, fns)
	}
	if err != nil {
		return "", err
	}
	return b.String(), nil
}

func xmlCatalog(b *strings.Builder, tools []chat.Tool, fns []*chat.Object) error {
	b.WriteString("In this environment you have access to a set of tools you can use to answer the user's question.\n")
	b.WriteString("You can invoke functions by writing a \"<function_calls>\" block like the following as part of your reply to the user:\n")
	b.WriteString("<function_calls>\n<invoke name=\"$FUNCTION_NAME\">\n<parameter name=\"$PARAMETER_NAME\">$PARAMETER_VALUE</parameter>\n...\n</invoke>\n<invoke name=\"$FUNCTION_NAME2\">\n...\n</invoke>\n</function_calls>\n\n")
	b.WriteString("String and scalar parameters should be specified as is, while lists and objects should use JSON format.\n\n")
	b.WriteString("Here are the functions available in JSONSchema format:\n<functions>\n")
	for i, t := range tools {
		o := &chat.Object{Members: []chat.Member{{Key: "description", Value: t.Description}, {Key: "name", Value: t.Name}, {Key: "parameters", Value: fns[i]}}}
		j, err := templates.PyJSON(o, 0)
		if err != nil {
			return err
		}
		b.WriteString("<function>" + j + "</function>\n")
	}
	b.WriteString("</functions>")
	return nil
}

func hermesCatalog(b *strings.Builder, tools []chat.Tool) error {
	b.WriteString("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n")
	b.WriteString("You are provided with function signatures within <tools></tools> XML tags:\n<tools>")
	if err := openAITools(b, tools, 0, "\n", ""); err != nil {
		return err
	}
	b.WriteString("\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>")
	return nil
}

func jsonCatalog(b *strings.Builder, tools []chat.Tool) error {
	b.WriteString("Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\n")
	b.WriteString("Respond in the format {\"name\": function name, \"parameters\": dictionary of argument name and its value}. Do not use variables. To make several calls, write one such object per line.\n\n")
	return openAITools(b, tools, 4, "", "\n\n")
}

func mistralCatalog(b *strings.Builder, tools []chat.Tool) error {
	b.WriteString("You can call tools. To call tools, reply with [TOOL_CALLS] followed by a JSON array of calls, each {\"name\": tool name, \"arguments\": {argument name: value}}, for example:\n")
	b.WriteString("[TOOL_CALLS][{\"name\": \"tool_name\", \"arguments\": {\"arg\": \"value\"}}]\n\n")
	b.WriteString("Available tools:\n[")
	if err := openAITools(b, tools, 0, "", ", "); err != nil {
		return err
	}
	b.WriteString("]")
	return nil
}

func qwen3CoderCatalog(b *strings.Builder, tools []chat.Tool, fns []*chat.Object) error {
	b.WriteString("# Tools\n\nYou have access to the following functions:\n\n<tools>")
	for i, t := range tools {
		if err := writeQwen3CoderTool(b, t, fns[i]); err != nil {
			return err
		}
	}
	b.WriteString("\n</tools>\n\nIf you choose to call a function ONLY reply in the following format with NO suffix:\n\n<tool_call>\n<function=example_function_name>\n<parameter=example_parameter_1>\nvalue_1\n</parameter>\n<parameter=example_parameter_2>\nThis is the value for the second parameter\nthat can span\nmultiple lines\n</parameter>\n</function>\n</tool_call>\n\n<IMPORTANT>\nReminder:\n- Function calls MUST follow the specified format: an inner <function=...></function> block must be nested within <tool_call></tool_call> XML tags\n- Required parameters MUST be specified\n- Parameter values are written as is; lists and objects as JSON\n- You may provide optional reasoning for your function call in natural language BEFORE the function call, but NOT after\n</IMPORTANT>")
	return nil
}

// writeQwen3CoderTool writes a tool as the Qwen3-Coder template does: each
// member of a parameter's schema as a tag, values as the schema wrote them.
func writeQwen3CoderTool(b *strings.Builder, t chat.Tool, params *chat.Object) error {
	fmt.Fprintf(b, "\n<function>\n<name>%s</name>", t.Name)
	if t.Description != "" {
		fmt.Fprintf(b, "\n<description>%s</description>", strings.TrimSpace(t.Description))
	}
	b.WriteString("\n<parameters>")
	props, _ := params.Get("properties")
	if po, ok := props.(*chat.Object); ok {
		for _, p := range po.Members {
			if err := writeQwen3CoderParam(b, p); err != nil {
				return err
			}
		}
	}
	if req, ok := params.Get("required"); ok {
		v, err := rawValue(req)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "\n<required>%s</required>", v)
	}
	b.WriteString("\n</parameters>\n</function>")
	return nil
}

func writeQwen3CoderParam(b *strings.Builder, p chat.Member) error {
	fmt.Fprintf(b, "\n<parameter>\n<name>%s</name>", p.Key)
	spec, _ := p.Value.(*chat.Object)
	for _, m := range membersOf(spec) {
		v, err := rawValue(m.Value)
		if err != nil {
			return err
		}
		if m.Key == "description" {
			v = strings.TrimSpace(v)
		}
		fmt.Fprintf(b, "\n<%s>%s</%s>", m.Key, v, m.Key)
	}
	b.WriteString("\n</parameter>")
	return nil
}

func pythonicCatalog(b *strings.Builder, tools []chat.Tool, fns []*chat.Object) error {
	b.WriteString("You can call functions. To call them, reply with a Python list of calls, using keyword arguments and Python literals:\n")
	b.WriteString("[func_name1(param1=\"value\", param2=5), func_name2(param=[1, 2])]\n\n")
	b.WriteString("Here is a list of functions in JSON format that you can invoke:\n[")
	for i, t := range tools {
		if i > 0 {
			b.WriteString(", ")
		}
		o := &chat.Object{Members: []chat.Member{{Key: "name", Value: t.Name}, {Key: "description", Value: t.Description}, {Key: "parameters", Value: fns[i]}}}
		j, err := templates.PyJSON(o, 0)
		if err != nil {
			return err
		}
		b.WriteString(j)
	}
	b.WriteString("]")
	return nil
}

func harmonyCatalog(b *strings.Builder, tools []chat.Tool, fns []*chat.Object) {
	b.WriteString("# Tools\n\n## functions\n\nnamespace functions {\n\n")
	for i, t := range tools {
		writeHarmonyTool(b, t, fns[i])
	}
	b.WriteString("} // namespace functions\n\n")
	b.WriteString("Calls to these tools must go to the commentary channel: 'functions'. Write a call as:\n")
	b.WriteString("<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{arguments as JSON}<|call|>")
}

func tagsCatalog(b *strings.Builder, tools []chat.Tool, fns []*chat.Object) error {
	b.WriteString("Tool use is formatted using XML-style tags. The tool name is enclosed in opening and closing tags, and each parameter is similarly enclosed within its own set of tags:\n\n")
	b.WriteString("<tool_name>\n<parameter1_name>value1</parameter1_name>\n<parameter2_name>value2</parameter2_name>\n</tool_name>\n\n")
	b.WriteString("Write string values as they are; write lists and objects as JSON.\n\n# Tools")
	for i, t := range tools {
		fmt.Fprintf(b, "\n\n## %s\nDescription: %s\nParameters: ", t.Name, t.Description)
		j, err := templates.PyJSON(fns[i], 0)
		if err != nil {
			return err
		}
		b.WriteString(j)
	}
	return nil
}

func writeHarmonyTool(b *strings.Builder, t chat.Tool, params *chat.Object) {
	b.WriteString("// " + t.Description + "\n")
	b.WriteString("type " + t.Name + " = ")
	props, _ := params.Get("properties")
	po, ok := props.(*chat.Object)
	if !ok || len(po.Members) == 0 {
		b.WriteString("() => any;\n\n")
		return
	}
	req, _ := params.Get("required")
	reqList, _ := req.([]any)
	b.WriteString("(_: {\n")
	for _, p := range po.Members {
		if d, ok := objGet(p.Value, "description").(string); ok && d != "" {
			b.WriteString("// " + d + "\n")
		}
		b.WriteString(p.Key)
		if !inList(p.Key, reqList) {
			b.WriteString("?")
		}
		b.WriteString(": " + templates.TypeScriptType(p.Value))
		if d, ok := chat.Lookup(p.Value, "default"); ok {
			j, _ := templates.PyJSON(d, 0)
			b.WriteString(", // default: " + j)
		}
		b.WriteString(",\n")
	}
	b.WriteString("}) => any;\n\n")
}

func objGet(v any, k string) any {
	x, _ := chat.Lookup(v, k)
	return x
}

func membersOf(o *chat.Object) []chat.Member {
	if o == nil {
		return nil
	}
	return o.Members
}

func inList(s string, l []any) bool {
	for _, e := range l {
		if e == s {
			return true
		}
	}
	return false
}

// paramsObject is a tool's parameters schema as an ordered object.
func paramsObject(t chat.Tool) (*chat.Object, error) {
	raw := t.Parameters
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = []byte(`{"type":"object","properties":{}}`)
	}
	v, err := chat.DecodeOrdered(raw)
	if err != nil {
		return nil, fmt.Errorf("render: parameters of %s: %w", t.Name, err)
	}
	o, ok := v.(*chat.Object)
	if !ok {
		return nil, fmt.Errorf("render: parameters of %s are not a JSON object", t.Name)
	}
	return o, nil
}

// openAITools writes each tool in the OpenAI shape (see openAIJSON),
// each after before, with sep between them.
func openAITools(b *strings.Builder, tools []chat.Tool, indent int, before, sep string) error {
	for i, t := range tools {
		if i > 0 {
			b.WriteString(sep)
		}
		j, err := openAIJSON(t, indent)
		if err != nil {
			return err
		}
		b.WriteString(before + j)
	}
	return nil
}

// openAIJSON is {"type": "function", "function": {…}} in Python layout.
func openAIJSON(t chat.Tool, indent int) (string, error) {
	raw, err := chat.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("render: tool %s: %w", t.Name, err)
	}
	v, err := chat.DecodeOrdered(raw)
	if err != nil {
		return "", fmt.Errorf("render: tool %s: %w", t.Name, err)
	}
	return templates.PyJSON(v, indent)
}
