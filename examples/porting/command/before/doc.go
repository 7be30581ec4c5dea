// Command before is examples/porting/command written with the API before
// the porting API: the command and the nodes return whole states.
package main
