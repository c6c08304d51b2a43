package parse

// repairs is a set of repair kinds; kept as a bit set so decoders can
// collect them without allocating, and listed in a fixed order.
type repairs uint32

const (
	rCodeFence repairs = 1 << iota
	rMissingOpenTag
	rMissingCloseTag
	rWrapperTag
	rArgumentsKey
	rArgumentsString
	rArrayWrapped
	rPythonLiterals
	rSingleQuotes
	rTrailingComma
	rFlattenedArguments
	rNestedCall
	rMissingBraces
	rPythonicCall
	rPositionalArguments
	rNameKey
	rMissingBrackets
	rMarkdownEscape
	rQuotedCall
	rBareIdentifier
	rMarkerSpelling
	rQuotedString
	rTupleValue
	rExpressionValue
	rUnescapedQuotes
	rQuotedName
	rTupleList
	rLineContinuation
	rJSONCall

	// rAddedClosers marks a call whose missing_braces repair added
	// closing brackets: at the end of the output without its closing
	// tag, it was cut off rather than a brace short (finish). Not a
	// repair of its own, so not in repairNames.
	rAddedClosers repairs = 1 << 31
)

var repairNames = [...]string{
	"code_fence", "missing_open_tag", "missing_close_tag", "wrapper_tag",
	"arguments_key", "arguments_string", "array_wrapped", "python_literals",
	"single_quotes", "trailing_comma", "flattened_arguments", "nested_call",
	"missing_braces", "pythonic_call", "positional_arguments", "name_key",
	"missing_brackets", "markdown_escape", "quoted_call", "bare_identifier",
	"marker_spelling", "quoted_string", "tuple_value", "expression_value",
	"unescaped_quotes", "quoted_name", "tuple_list", "line_continuation",
	"json_call",
}

// RepairKinds returns every repair kind a call can carry.
func RepairKinds() []string { return append([]string(nil), repairNames[:]...) }

func (r repairs) list() []string {
	if r == 0 {
		return nil
	}
	var out []string
	for i, n := range repairNames {
		if r&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}
