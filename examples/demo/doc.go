// Package demo holds the offline demo's plan and script, embedded so that
// `gaffer demo` needs no files beside the binary.
package demo
