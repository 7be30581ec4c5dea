package cli

import (
	"io"
	"os"
	"strings"
	"testing"

	ucli "github.com/urfave/cli/v2"
)

// TestCommandsPageNamesEveryFlag: every command and subcommand of the
// application, and every flag its --help shows, appears in
// docs/commands.md, so the reference cannot fall behind the binary.
func TestCommandsPageNamesEveryFlag(t *testing.T) {
	b, err := os.ReadFile("../docs/commands.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	app := New("test", io.Discard, io.Discard)
	for _, f := range app.Flags {
		checkFlagDocumented(t, page, "gaffer", f)
	}
	var walk func(prefix string, cmds []*ucli.Command)
	walk = func(prefix string, cmds []*ucli.Command) {
		for _, c := range cmds {
			if c.Hidden {
				continue
			}
			name := prefix + " " + c.Name
			if !strings.Contains(page, "`"+name) {
				t.Errorf("docs/commands.md does not show the command `%s`", name)
			}
			for _, f := range c.Flags {
				checkFlagDocumented(t, page, name, f)
			}
			walk(name, c.Subcommands)
		}
	}
	walk("gaffer", app.Commands)
}

// checkFlagDocumented fails t unless page holds `--NAME` (or `-N` for a
// one-letter name) for the flag's first name.
func checkFlagDocumented(t *testing.T, page, cmd string, f ucli.Flag) {
	t.Helper()
	if v, ok := f.(ucli.VisibleFlag); ok && !v.IsVisible() {
		return
	}
	name := f.Names()[0]
	if name == "help" || name == "version" && cmd != "gaffer" {
		return
	}
	want := "--" + name
	if len(name) == 1 {
		want = "-" + name
	}
	if !strings.Contains(page, want) {
		t.Errorf("docs/commands.md does not name %s's flag %s", cmd, want)
	}
}
