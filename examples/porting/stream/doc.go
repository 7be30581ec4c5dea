// Command stream streams a parallel step's updates, written with the
// porting API: the fast branch's update is printed as soon as it is saved,
// before the slow one's, as LangGraph streams them. before/ is the same
// program with the API before it, which prints them after the step, in
// branch order.
package main
