// Command command is LangGraph's Command with goto, written with the
// porting API: triage returns a partial update and where to go, in one
// value. before/ is the same program with the API before it.
package main
