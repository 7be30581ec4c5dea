// Command before is examples/porting/task written with the API before the
// porting API: Interrupt with a raw JSON answer and a whole-state node.
package main
