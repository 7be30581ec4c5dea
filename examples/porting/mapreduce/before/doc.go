// Command before is examples/porting/mapreduce written with the API before
// the porting API: a SendRouter, a merge function and whole-state nodes.
package main
