// Package environ edits the environment lists (NAME=value) that package
// agent and its drivers give to the commands they start.
package environ
