// Package syncbuf holds Buffer, a bytes.Buffer that one goroutine may
// read while others write to it: the log of a server or a worker pool
// that a test reads as the run goes.
package syncbuf
