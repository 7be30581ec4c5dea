package cliagent

import (
	"strings"
	"testing"
)

// TestVendorTable: every row's name is its vendor's and its built-in
// template's, the template is valid and is read by its own vendor, each
// program and output format belongs to one vendor, and a flag is judged by
// the vendor of the program that takes it.
func TestVendorTable(t *testing.T) {
	seen := map[string]bool{}
	for _, row := range vendorTable() {
		v := row.new()
		tmpl := v.Template()
		if v.Name() != row.name || seen[row.name] {
			t.Errorf("row %q: vendor %q (seen %v)", row.name, v.Name(), seen[row.name])
		}
		seen[row.name] = true
		if err := CheckTemplate(tmpl); err != nil {
			t.Errorf("%s: %v", row.name, err)
		}
		if got := byOutput(tmpl.Output); got == nil || got.Name() != row.name {
			t.Errorf("%s: output %q is read by %v", row.name, tmpl.Output, got)
		}
		if got := byProgram("/usr/local/bin/" + tmpl.Command[0]); got == nil || got.Name() != row.name {
			t.Errorf("%s: program %q is %v's", row.name, tmpl.Command[0], got)
		}
		if BuiltinTemplates()[row.name].Command[0] != tmpl.Command[0] {
			t.Errorf("%s: not among the built-in templates", row.name)
		}
	}
	if got := SkipsPrompts("gemini", "--yolo"); !strings.Contains(got, "approves all") {
		t.Errorf("gemini --yolo = %q, want the Gemini CLI's meaning", got)
	}
	if got := SkipsPrompts("codex", "--yolo"); !strings.Contains(got, "sandbox") {
		t.Errorf("codex --yolo = %q, want Codex's meaning", got)
	}
	if got := SkipsPrompts("claude", "--yolo"); got != "" {
		t.Errorf("claude --yolo = %q, want nothing: Claude Code has no such flag", got)
	}
	if got := SkipsPrompts("my-wrapper", "--dangerously-skip-permissions"); got == "" {
		t.Error("a wrapper's --dangerously-skip-permissions is not flagged")
	}
}
