package cliagent

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/agent/cliagent/claude"
	"github.com/gaffer-dev/gaffer/agent/cliagent/clikit"
	"github.com/gaffer-dev/gaffer/agent/cliagent/codex"
	"github.com/gaffer-dev/gaffer/agent/cliagent/gemini"
)

// vendor is one row of the vendor table.
type vendor struct {
	name string
	new  func() clikit.Vendor
}

// vendorTable lists the agent CLIs gaffer knows, by the name of their
// built-in template and their constructor: a new agent CLI is its package
// (see clikit.Vendor) and one line here. There is no registration from
// init.
func vendorTable() []vendor {
	return []vendor{
		{claude.Name, claude.New},
		{codex.Name, codex.New},
		{gemini.Name, gemini.New},
	}
}

// Vendors returns the known vendors, in the table's order.
func Vendors() []clikit.Vendor {
	t := vendorTable()
	out := make([]clikit.Vendor, len(t))
	for i, v := range t {
		out[i] = v.new()
	}
	return out
}

// VendorNames returns the names of the built-in templates, in the table's
// order.
func VendorNames() []string {
	var out []string
	for _, v := range vendorTable() {
		out = append(out, v.name)
	}
	return out
}

// BuiltinTemplates returns the ready-made templates by name, one per
// vendor ("claude", "codex", …). The map is new on every call.
func BuiltinTemplates() map[string]Template {
	out := map[string]Template{}
	for _, v := range vendorTable() {
		out[v.name] = v.new().Template()
	}
	return out
}

// byOutput returns the vendor that reads output format f, or nil.
func byOutput(f OutputFormat) clikit.Vendor {
	for _, v := range Vendors() {
		if f == v.Output() {
			return v
		}
	}
	return nil
}

// byProgram returns the vendor whose built-in template runs program (by
// base name), or nil.
func byProgram(program string) clikit.Vendor {
	for _, v := range Vendors() {
		if cmd := v.Template().Command; len(cmd) > 0 && filepath.Base(cmd[0]) == filepath.Base(program) {
			return v
		}
	}
	return nil
}

// CheckTemplate reports what makes t unrunnable (Template.Validate) or an
// output format no vendor reads. The errors match ErrInvalidTemplate.
func CheckTemplate(t Template) error {
	if err := t.Validate(); err != nil {
		return err
	}
	if f := t.EffectiveOutput(); f != OutputText {
		if byOutput(f) == nil {
			return fmt.Errorf("%w: output %q is not %s", ErrInvalidTemplate, t.Output, strings.Join(outputNames(), ", "))
		}
	}
	return nil
}

// outputNames returns the output formats a template may name.
func outputNames() []string {
	out := []string{string(OutputText)}
	for _, v := range Vendors() {
		out = append(out, string(v.Output()))
	}
	return out
}

// SkipsPrompts names what argument arg of a command running program turns
// off when it is one of the flags that make an agent act without asking
// (Claude Code's --dangerously-skip-permissions, Codex's --yolo, …), or "".
// The vendor of program answers alone; for a program no vendor runs (a
// wrapper, say), any vendor's flag counts.
func SkipsPrompts(program, arg string) string {
	if v := byProgram(program); v != nil {
		return v.SkipsPrompts(arg)
	}
	for _, v := range Vendors() {
		if why := v.SkipsPrompts(arg); why != "" {
			return why
		}
	}
	return ""
}

// textVendor reads any agent's stdout as plain text: the whole of it is the
// final output. A Driver uses it for a template no vendor reads.
type textVendor struct{}

func (textVendor) Name() string                          { return "" }
func (textVendor) Template() Template                    { return Template{} }
func (textVendor) Output() OutputFormat                  { return OutputText }
func (textVendor) Lines() clikit.LineParser              { return noLines{} }
func (textVendor) State([]string) (dirs, files []string) { return nil, nil }
func (textVendor) Args(agent.Session) []string           { return nil }
func (textVendor) SkipsPrompts(string) string            { return "" }
func (textVendor) Outage(run clikit.Run, res clikit.Result) string {
	return clikit.CommonOutage(run, res, false)
}
func (textVendor) Parse(stdout []byte) clikit.Result {
	return clikit.Result{Parsed: true, Text: strings.TrimSpace(string(stdout))}
}

// noLines is the LineParser of plain text: it streams nothing.
type noLines struct{}

func (noLines) Messages([]byte) []agent.Message { return nil }
func (noLines) Busy() string                    { return "" }
