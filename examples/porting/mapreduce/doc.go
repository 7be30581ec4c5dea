// Command mapreduce is LangGraph's map-reduce with Send, written with the
// porting API: one joke branch per subject, collected by the append
// reducer of Jokes, then the best joke. before/ is the same program with
// the API before it.
package main
