package cli

import (
	"fmt"
	"io"

	ucli "github.com/urfave/cli/v2"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/graph"
	"github.com/gaffer-dev/gaffer/nodes"
	"github.com/gaffer-dev/gaffer/state"
	"github.com/gaffer-dev/gaffer/workspace"
)

// GraphOptions are the flags of `gaffer graph`.
type GraphOptions struct {
	Format string // "mermaid" (the default) or "dot"
}

func graphCommand(io IO) *ucli.Command {
	return &ucli.Command{
		Name:         "graph",
		Usage:        "print the workflow's graph, as a Mermaid flowchart or in Graphviz DOT",
		OnUsageError: onUsageError,
		Flags: []ucli.Flag{
			&ucli.StringFlag{Name: "format", Value: "mermaid", EnvVars: []string{"GAFFER_FORMAT"}, Usage: "mermaid or dot"},
		},
		Action: func(c *ucli.Context) error {
			if c.Args().Present() {
				return usageErrorf("graph takes no arguments")
			}
			return Graph(io.Out, GraphOptions{Format: c.String("format")})
		},
	}
}

// Graph writes the workflow's compiled graph to w. It needs no repository
// or store: the graph is the same for every run.
func Graph(w io.Writer, o GraphOptions) error {
	if o.Format != "mermaid" && o.Format != "dot" {
		return usageErrorf("unknown --format %q: use mermaid or dot", o.Format)
	}
	g, err := nodes.Build(nodes.Config{
		Repo:    &workspace.Repo{}, // never used: nothing runs
		Drivers: func(agent.Role, state.RunConfig) (agent.Driver, error) { return nil, nil },
	})
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	r, err := g.Compile(graph.WithCodec(nodes.NewCodec()), graph.WithMerge(nodes.Merge))
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	out := r.Mermaid()
	if o.Format == "dot" {
		out = r.DOT()
	}
	_, err = io.WriteString(w, out)
	return err
}
