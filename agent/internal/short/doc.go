// Package short shortens text for the messages of package agent and its
// drivers: a value quoted in an error, the first line of an output used as
// a summary.
package short
