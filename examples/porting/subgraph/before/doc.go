// Command before is examples/porting/subgraph written with the API before
// the porting API: AddSubgraph with in and out functions, Interrupt with a
// raw JSON answer, whole-state nodes.
package main
