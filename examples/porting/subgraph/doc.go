// Command subgraph is a LangGraph subgraph with an interrupt, written with
// the porting API: the review subgraph (the parent's state type, added in
// the chain) asks for approval with graph.Ask; the run stops, and Resume
// answers it inside the subgraph. before/ is the same program with the API
// before it.
package main
