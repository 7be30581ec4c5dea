// Package changes keeps the list of paths a session changed, in the order
// they were first touched, for Report.FilesChanged of package agent and its
// drivers.
package changes
