// Package testkit holds the test helpers that package agent, its drivers
// and the contract suite agenttest share: files read or made for a test,
// a git repository in a temp dir, a process group recorder that checks it
// is asked before the command begins, and a wait for a process to be gone.
package testkit
