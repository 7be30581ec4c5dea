package graph

import (
	"fmt"
	"slices"
	"strings"
)

// drawGraph is a compiled graph as Mermaid and DOT draw it.
type drawGraph struct {
	nodes []drawNode // in the order they were added
	edges []drawEdge // static edges first, then conditional ones, by source in node order
}

type drawNode struct {
	name     string
	sub      *drawGraph // a subgraph node's child graph
	deferred bool
}

type drawEdge struct {
	from, to    string
	conditional bool   // chosen at run time: a router, a send or a command
	label       string // "send" or "goto" for those kinds, "" otherwise
}

// drawing describes r for Mermaid and DOT. It is pure: it reads the graph only.
func (r *Runner[S]) drawing() *drawGraph {
	d := &drawGraph{}
	for _, name := range r.order {
		n := r.nodes[name]
		dn := drawNode{name: name, deferred: n.deferred}
		if n.sub != nil {
			dn.sub = n.sub.drawing()
		}
		d.nodes = append(d.nodes, dn)
	}
	sources := append([]string{START}, r.order...)
	for _, from := range sources {
		for _, to := range r.edges[from] {
			d.edges = append(d.edges, drawEdge{from: from, to: to})
		}
	}
	for _, from := range sources {
		if c := r.conds[from]; c != nil {
			label := ""
			if c.sends {
				label = "send"
			}
			for _, to := range c.targets {
				d.edges = append(d.edges, drawEdge{from: from, to: to, conditional: true, label: label})
			}
		}
		if n := r.nodes[from]; n != nil {
			for _, to := range n.gotos {
				d.edges = append(d.edges, drawEdge{from: from, to: to, conditional: true, label: "goto"})
			}
		}
	}
	return d
}

func (s *subgraphOf[P, C]) drawing() *drawGraph { return s.child.drawing() }

// Mermaid draws the compiled graph as a Mermaid flowchart, as LangGraph's
// draw_mermaid: solid arrows for static edges, dotted ones for the targets a
// router, a send edge ("send") or a command node ("goto") may choose, and
// each subgraph as a Mermaid subgraph holding its child graph.
func (r *Runner[S]) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	mermaidBody(&b, r.drawing(), "", "\t")
	return b.String()
}

func mermaidID(prefix, name string) string {
	id := prefix + name
	return strings.NewReplacer(" ", "_", "-", "_", ".", "_", ":", "_", "|", "_").Replace(id)
}

func mermaidBody(b *strings.Builder, d *drawGraph, prefix, indent string) {
	fmt.Fprintf(b, "%s%s([%s])\n", indent, mermaidID(prefix, START), "start")
	for _, n := range d.nodes {
		id := mermaidID(prefix, n.name)
		switch {
		case n.sub != nil:
			fmt.Fprintf(b, "%ssubgraph %s [%s]\n", indent, id, n.name)
			mermaidBody(b, n.sub, id+"__", indent+"\t")
			fmt.Fprintf(b, "%send\n", indent)
		case n.deferred:
			fmt.Fprintf(b, "%s%s[\"%s (deferred)\"]\n", indent, id, n.name)
		default:
			fmt.Fprintf(b, "%s%s[%s]\n", indent, id, n.name)
		}
	}
	fmt.Fprintf(b, "%s%s([%s])\n", indent, mermaidID(prefix, END), "end")
	for _, e := range d.edges {
		from, to := mermaidID(prefix, e.from), mermaidID(prefix, e.to)
		if sub := d.sub(e.from); sub != nil {
			from = mermaidID(from+"__", END) // a subgraph leaves from its end
		}
		if sub := d.sub(e.to); sub != nil {
			to = mermaidID(to+"__", START) // and is entered at its start
		}
		switch {
		case !e.conditional:
			fmt.Fprintf(b, "%s%s --> %s\n", indent, from, to)
		case e.label != "":
			fmt.Fprintf(b, "%s%s -. %s .-> %s\n", indent, from, e.label, to)
		default:
			fmt.Fprintf(b, "%s%s -.-> %s\n", indent, from, to)
		}
	}
}

func (d *drawGraph) sub(name string) *drawGraph {
	i := slices.IndexFunc(d.nodes, func(n drawNode) bool { return n.name == name })
	if i < 0 {
		return nil
	}
	return d.nodes[i].sub
}

// DOT draws the compiled graph in Graphviz's DOT language: solid edges for
// static edges, dashed ones for what routers, sends and commands may
// choose, and each subgraph as a cluster holding its child graph.
func (r *Runner[S]) DOT() string {
	var b strings.Builder
	b.WriteString("digraph G {\n\trankdir=TB;\n")
	dotBody(&b, r.drawing(), "", "\t")
	b.WriteString("}\n")
	return b.String()
}

func dotBody(b *strings.Builder, d *drawGraph, prefix, indent string) {
	q := func(name string) string { return fmt.Sprintf("%q", prefix+name) }
	fmt.Fprintf(b, "%s%s [label=\"start\", shape=oval];\n", indent, q(START))
	for _, n := range d.nodes {
		switch {
		case n.sub != nil:
			fmt.Fprintf(b, "%ssubgraph %q {\n%s\tlabel=%q;\n", indent, "cluster_"+prefix+n.name, indent, n.name)
			dotBody(b, n.sub, prefix+n.name+"/", indent+"\t")
			fmt.Fprintf(b, "%s}\n", indent)
		case n.deferred:
			fmt.Fprintf(b, "%s%s [label=%q, shape=box, style=dotted];\n", indent, q(n.name), n.name+" (deferred)")
		default:
			fmt.Fprintf(b, "%s%s [label=%q, shape=box];\n", indent, q(n.name), n.name)
		}
	}
	fmt.Fprintf(b, "%s%s [label=\"end\", shape=oval];\n", indent, q(END))
	for _, e := range d.edges {
		from, to := q(e.from), q(e.to)
		if d.sub(e.from) != nil {
			from = fmt.Sprintf("%q", prefix+e.from+"/"+END)
		}
		if d.sub(e.to) != nil {
			to = fmt.Sprintf("%q", prefix+e.to+"/"+START)
		}
		attrs := ""
		if e.conditional {
			attrs = " [style=dashed]"
			if e.label != "" {
				attrs = fmt.Sprintf(" [style=dashed, label=%q]", e.label)
			}
		}
		fmt.Fprintf(b, "%s%s -> %s%s;\n", indent, from, to, attrs)
	}
}
