// Package porting holds five programs a LangGraph.js user writes first,
// each written with graph's porting API (main.go) and with the API before
// it (before/main.go), to compare their length; testdata/langgraphjs holds
// the same programs in LangGraph.js, and testdata/*.out what all three
// print. Run one with go run ./examples/porting/mapreduce.
package porting
