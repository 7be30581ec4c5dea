// Package host is the run host: the one service every front end of gaffer
// works through.
//
// # The service
//
// Service is the API: Start, Resume, Answer, Cancel, Status, State, List,
// History, Fork, Submit and Delete. Its operations take typed requests
// and return domain outcomes (a run completed, parked for a human,
// halted, stopped on an error, handed to the process that drives it: see
// Kind), and an *Error for what they refuse, whose Code (held, refused,
// usage, …) each front end maps; never exit codes. A caller does not know
// which implementation it has:
//
//   - a *Host, in the process that holds the store;
//   - the Holder a command serves to other processes while it holds the
//     store: it reads and cancels runs and takes the answer to the question
//     it asks, and refuses to start or resume runs until it ends;
//   - serve's Pool (package host/pool), which queues runs for its workers;
//   - a Client (package host/socket), the same Service over the store's
//     control socket, in any other process.
//
// # The host
//
// A Host owns an open store (package host/hoststore opens a Badger
// directory or a PostgreSQL database for it), the compiled workflow's
// runner on it, the runs it drives now and the locks of their work trees.
// The program around it gives it a Setup, which prepares a run from a
// RunSpec once (package profile: its id minted, its profile resolved, its
// inputs and work tree checked; Prepared) and makes the agents' drivers,
// and a Front, the person it works for: what it says, how a driven run's
// progress is shown, how a plan's approval is asked (Quiet for nobody).
//
// # Runs and their work trees
//
// A run works on its own branch, gaffer/<run-id>, in its own work tree
// beside the store (workspace.RunTrees), or with RunSpec.InPlace in the
// user's checkout, under that checkout's lock; the tree goes when the run
// ends and the branch stays (worktree.go). On a database store with a
// shared remote (Config.Remote) each run works in a clone of the remote,
// and each phase's commit is pushed with compare-and-swap before its
// checkpoint, so that the serve of any host may take a run over
// (remote.go). A listing reads each run through the summary its latest
// checkpoint carries (package host/listing), so that 10,000 runs list in
// well under 100 ms.
package host
