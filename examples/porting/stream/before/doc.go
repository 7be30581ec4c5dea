// Command before is examples/porting/stream written with the API before
// the porting API: a merge function, whole-state nodes, and payloads
// asserted to the state type. Built today, it prints the fast branch's
// update first too; before issue 34 it printed slow first.
package main
