// Package socket is the run service on a store's control socket: the
// process that holds the store serves a host.Service there (Listen,
// Register), and a Client is the same Service in another process, so
// that a command does not know whether it runs locally or talks to the
// holder (Connect makes that choice: the holder when one answers, else
// the database's serves, else the store opened in the caller's process).
//
// The protocol is versioned: each operation is "v<ProtocolVersion>.<name>",
// its request and its reply JSON, a refusal its host.Code and its one
// line (a call cut off as the holder closes is ErrUnreachable, as if
// nobody had answered). A listing crosses the socket as one compressed
// record of rows (entries; package listing), each run as its store record
// where it has a summary. The operations of older gaffers are answered
// for their clients (list, runs: TestOldClientsListOverTheSocket) and
// asked of their holders in turn; a holder of another version answers
// none, which the Client reports as ErrProtocolVersion.
package socket
