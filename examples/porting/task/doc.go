// Command task is LangGraph's durable task (the functional API's task and
// interrupt), written with the porting API: the charge runs once though
// the node runs again when the interrupt is answered, since graph.Task
// journals its result. before/ is the same program with the API before it.
package main
