// Command approval is a small standalone graph on a Badger store: it drafts a
// plan, waits for a human to approve it, then works through the plan's items
// one step (and one checkpoint) at a time.
//
//	go run ./examples/approval -dir /tmp/approval          # runs until the approval interrupt
//	go run ./examples/approval -dir /tmp/approval -approve # answers it; the work starts
//	^C or kill -9 it while it works, then run it again:   # resumes at the next item
//	go run ./examples/approval -dir /tmp/approval
//
// -reject answers no instead and the run ends. A run that is done stays done;
// use a new -run id (or a new -dir) to start again.
package main
