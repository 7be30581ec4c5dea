// Package graph is a durable, typed state-graph runtime: LangGraph's model of
// nodes, edges, conditional routing, fan-out, interrupts and time travel, with
// every step checkpointed into a checkpoint.Store so that a run killed at any
// moment resumes where it stopped.
//
// (The full contract is written below as it is implemented.)
package graph
