// Package inputfile reads the files a user or a repository hands gaffer
// (plans, scripts, gaffer.yaml, token files) through a bound: a file that
// is not a regular one (a device such as /dev/zero, a directory, a socket,
// a FIFO unless the caller takes pipes, as /dev/stdin) is refused before
// anything is read, and no more than the caller's limit is ever read into
// memory. A symbolic link is followed, and its target is checked.
package inputfile
