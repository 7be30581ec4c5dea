// Package graph is a durable, typed state-graph runtime: LangGraph's model of
// nodes, edges, conditional routing, fan-out, interrupts and time travel, with
// every step checkpointed into a checkpoint.Store so that a run killed at any
// moment resumes where it stopped.
//
// # Building and running
//
// A Graph[S] is built with AddNode, AddEdge and AddConditionalEdge, from
// START to END, and checked as a whole by Compile, which lists every
// structural problem at once. The Runner it returns runs graphs:
//
//	g := graph.New[State]().
//		AddNode("plan", plan, graph.Retry(graph.RetryPolicy{MaxAttempts: 3, Backoff: time.Second})).
//		AddNode("work", work, graph.Timeout(time.Minute)).
//		AddEdge(graph.START, "plan").
//		AddEdge("plan", "work").
//		AddConditionalEdge("work", more, "work", graph.END)
//	r, err := g.Compile(graph.WithStore(store), graph.WithDurability(graph.Sync))
//	res, err := r.Run(ctx, "run-1", State{})              // res.Status: Done or Interrupted
//	res, err = r.Resume(ctx, "run-1", graph.WithResume(true)) // answers an interrupt
//
// # Reducers and partial updates
//
// A struct state's fields may carry reducers, as LangGraph's annotated
// channels: graph:"append" (a slice: writes are appended), graph:"sum" (a
// number: writes are added), graph:"last" (the last write in branch order
// wins), or a custom function given with Graph.Reduce and Reducer. A field
// without one may be written by one branch per step (ErrConflict
// otherwise). Compile checks them; a graph that declares none runs as if
// reducers did not exist.
//
// A node returns the whole next state, or, with Partial, an update: only
// the fields it sets (not zero) are written, through their reducers. In a
// fan-out step without a merge function the reducers combine the branches:
// a Partial node's or a send's result is its write; a named node that
// returned the whole state wrote what it changed (what it appended to an
// append field, what it added to a sum field, the new value of any other
// changed field). WithMerge and WithMergeBranches, when given, combine the
// branches instead. A node that needs no context and cannot fail may be
// written as a plain function of the state and made a node with Func.
//
// # Steps and what is persisted when
//
// A run is a sequence of steps. A step runs the nodes that are due (one, or
// several after a fan-out), computes the next state (the node's result or
// update, or the combination of the branches by the merge function or the
// reducers, in branch order), asks
// the routers which nodes are due next, and writes one checkpoint: run id,
// sequence number, parent, step, the nodes that ran, the nodes due next, the
// encoded state, any pending interrupt, status, time and the schema version
// (Meta[MetaSchema]), and, with WithSummary, a small digest of the state
// that the store keeps with the run's index, so that Store.Runs lists many
// runs without reading their states. Routers and merges see the state the
// step produced.
//
// Run writes a first checkpoint (seq 1, step 0) holding the input, with the
// nodes after START due, before any node runs. Each later checkpoint is
// written before the next step starts:
//
//   - Sync: the checkpoint is fsynced before the next step (the default).
//   - Async: it is written without fsync; a machine crash may lose the last
//     steps, a process crash does not.
//   - Exit: checkpoints are kept in memory and written, in order, when the
//     Run or Resume call returns for any reason (done, interrupted, failed,
//     cancelled). A killed process loses what the call did.
//
// In a fan-out step, each branch's result is saved as a pending write
// (checkpoint.Store.PutWrites) as soon as the branch finishes, keyed by a
// task id made of (run, step, node, branch index). A pending write is saved
// after the checkpoint the step started from and before the checkpoint that
// consumes it.
//
// # What Resume guarantees
//
// Resume loads the latest checkpoint and runs the nodes it says are due, so
// a run killed at any moment continues from the last checkpoint written:
// the steps it records are never lost or applied twice to the state. The
// step that was running when the process died runs again from its start
// (at-least-once for the node's side effects), except the fan-out branches
// whose pending writes were saved: those are not run again. See Resume for
// interrupted, failed and finished runs (a finished run gives ErrRunDone).
//
// While a Run or Resume call goes on it holds the run's lease in the store,
// renews it in the background, and every write carries the lease's fencing
// token: a second process gets the store's *checkpoint.LeaseHeldError, and a
// writer that lost its lease fails with checkpoint.ErrFenced instead of
// overwriting the new holder's checkpoints.
//
// # Interrupts
//
// A node calls Interrupt to wait for outside input: the call returns an
// *InterruptError that the node returns, the run stops with a checkpoint
// whose Interrupt names the node, the payload and the call's index, and Run
// returns Status Interrupted. Resume with WithResume(value) runs the node
// again from its start; its earlier Interrupt calls return the answers given
// before, in order, and the interrupted one returns value. The answers are
// kept in the checkpoint (checkpoint.Interrupt.Answers), and the new value is
// saved as a pending write before the node runs, so an answer is never lost
// to a crash. WithInterruptBefore
// and WithInterruptAfter stop the run before or after a node without the
// node's help; Resume continues such a run with or without a value. When a
// node has a stop after it and the next node a stop before it, the run stops
// twice. An interrupt after a node that ends the run is not recorded: the
// run is done.
//
// # What a node may and may not do
//
// The runtime may run a node more than once for the same step: after a
// crash, after a retry, and after every interrupt it raised. So a node:
//
//   - must not mutate its input; it returns a new state (copy slices and maps
//     before changing them). graphtest.CheckPure checks this in tests.
//   - must make the same Interrupt calls in the same order each time it runs
//     for a step, since answers are matched to calls by order.
//   - must make outside side effects idempotent, or record them in the state
//     before a later step depends on them (a node that commits, say, should
//     first look for its own earlier commit).
//   - must take anything derived from the clock or randomness from the
//     state, or write it into the state, so that a resumed run sees the value
//     the first attempt saw. The engine itself reads no clock but the one
//     given with WithClock and uses no randomness: task ids are deterministic.
//   - may use its ctx for cancellation and the node's timeout, and pass it to
//     Interrupt and Emit; it carries nothing else.
//   - should return soon after its ctx is done. With a Timeout, the attempt
//     ends at the deadline whether or not the node returns: the attempt fails
//     with ErrNodeTimeout, the late result is dropped (never merged, saved or
//     checkpointed), and the node's goroutine runs on in the background,
//     possibly alongside the next attempt, until the node returns. Only the
//     node can stop its own work. A run whose ctx is done starts no further
//     step: Run returns the ctx's error at the last checkpoint, with a store
//     or without one, even when no node looks at its ctx (a Func node).
//
// Routers must be pure functions of the state: they run again on resume.
//
// # Sends, commands, tasks, subgraphs and the rest of LangGraph's kit
//
// A router (AddRoute, as LangGraph's conditional edges; AddConditionalEdge
// and AddSendEdge are its older forms) returns node names and may start
// sends: branches that run a node on their own input instead of the step's
// state, as LangGraph's Send for map-reduce. The checkpoint that makes them
// due keeps their inputs (in Values, listed by Meta[MetaSends]), each send
// is a branch of the next step saved as a pending write when it finishes,
// and the merge function or the reducers combine the branches in branch
// order. A finished send is never run again after a crash, as any fan-out
// branch; a failing one does not cancel the others (see AddSendEdge).
//
// A command node (AddCommandNode) returns a Command: its update and where
// to go (Goto, Sends), beside its static edges. Compile checks every
// declared target; a Goto to an undeclared one fails the step. In a fan-out
// the Command is saved with the branch's pending write.
//
// Task journals a side effect's result as a pending write of the running
// step, so a node run again for that step (after a crash, a retry or an
// interrupt) gets the result instead of calling the function again; see
// Task for what is and is not exactly-once.
//
// AddSubgraph runs a compiled graph as a node (Graph.AddSubgraph for one of
// the same state type, the package function for another). The
// child is a run of its own (ChildRunID: the parent's id, NamespaceSep, then
// node:step:branch) in the parent's store, under the same durability and
// lease rules, so a crash at any depth resumes exactly: the parent runs the
// subgraph node again, which resumes the child from its latest checkpoint.
// An interrupt in the child stops the whole run; Resume answers it in the
// child. SubgraphAt (by a path of subgraph nodes), Subgraph and Children
// read the child's checkpoints. A child's Command with Parent ends the
// child and sends the parent to its nodes.
//
// Stream yields a run's events as a Go iterator, by StreamMode (values,
// updates, custom, tasks, checkpoints, debug, and subgraph events with
// their Namespace); StateOf reads their states typed. In a parallel step
// each branch's update is yielded as its pending write is saved, before
// the step's checkpoint (Event.Pending). Stopping the loop leaves the run
// interrupted with KindStop after the step under way, and Resume
// continues it.
//
// Cache (a CachePolicy with a key and a TTL; CacheKey types the key)
// skips a node whose input's key was seen within the TTL, applying the
// write the node made then, kept in the Runner's memory, to this input.
// Defer makes a node wait until no other branch is pending, and run once.
// Mermaid and DOT draw the compiled graph.
//
// # Events
//
// Subscribers receive typed events (RunStarted, NodeStarted, NodeFinished,
// NodeRetry, NodeCached, CheckpointSaved, RunInterrupted, Custom from Emit,
// the Task events, RunFinished; a subgraph's with their Namespace)
// synchronously, one at a time, in the order they happen; events of
// concurrent fan-out branches interleave. A subscriber that panics is
// unsubscribed and the run goes on.
//
// # State encoding
//
// The state is encoded by a Codec (JSONCodec by default: one JSON value per
// top-level field, so stores that keep values content-addressed store an
// unchanged field once). Decoding is strict: an unknown or missing field, or
// a checkpoint written with another WithSchemaVersion, is an error naming
// the run and the sequence number, never a silent zero value.
package graph
