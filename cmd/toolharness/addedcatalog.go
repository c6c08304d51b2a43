package main

import (
	"fmt"
	"io"
	"time"

	"github.com/toolharness/toolharness/agent"
	"github.com/toolharness/toolharness/derive"
	"github.com/toolharness/toolharness/templates"
)

// A loaded template that renders no tool calls cannot write the catalog
// and the calls: the harness writes them itself, in a format package
// render writes, with the catalog at the end of the system message. Every
// command that renders or parses with such a template says so in the same
// words (catalogNote), and parse reads the same format.

// catalogNote is the line said of a template that renders no tools.
func catalogNote(format string) string { return agent.AddedCatalogNote(format) }

// addedCatalogFormat is the format of the catalog the harness adds to
// fam's template, or "" when fam is no loaded template or its template
// writes calls itself. format is the --format asked for ("" = the
// family's default).
func addedCatalogFormat(fam templates.Family, format string) string {
	j := fam.Jinja()
	if j == nil {
		return ""
	}
	if res, err := derive.Template(j, time.Time{}, nil); err != nil || res.WritesCalls {
		return ""
	}
	if format == "" {
		format = fam.DefaultFormat
	}
	return format
}

// noteAddedCatalog says catalogNote on errw when the harness adds the
// catalog to fam's template.
func noteAddedCatalog(fam templates.Family, format string, errw io.Writer) {
	if f := addedCatalogFormat(fam, format); f != "" {
		fmt.Fprintf(errw, "toolharness: %s\n", catalogNote(f))
	}
}

// noteCatalog says on errw what catalog fam's template is given: in raw
// mode the added one of a template that renders no tools (catalogNote);
// in chat mode also the added one of a template whose own tool section
// cannot be sent (agent.PlanChatCatalog).
func noteCatalog(fam templates.Family, format string, chatMode bool, errw io.Writer) error {
	if !chatMode {
		noteAddedCatalog(fam, format, errw)
		return nil
	}
	plan, err := agent.PlanChatCatalog(fam, format)
	if err != nil {
		return err
	}
	if plan.Note != "" {
		fmt.Fprintf(errw, "toolharness: %s\n", plan.Note)
	}
	return nil
}

// addedCatalogParsers are the parsers of a template that writes no calls
// (parse --chat-template): those of the format the harness adds its
// catalog in, said as every command says it.
func addedCatalogParsers(j *templates.Jinja, errw io.Writer) (parserFactory, error) {
	fam, err := templates.FamilyOf(j)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(errw, "toolharness: %s\n", catalogNote(fam.DefaultFormat))
	return formatParsers(fam.DefaultFormat), nil
}
