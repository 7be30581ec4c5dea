// Package notify delivers runs' notices — the outbox each run keeps in its
// checkpointed state (state.Outbox) — to the targets its config names
// (state.NotifyConfig): a signed JSON webhook (or Slack's {"text": …}), an
// ntfy topic, a local command. Delivery is at least once: a Deliverer
// runs in whichever process holds the store, on its own goroutine, and is
// poked after each checkpoint of a run (and once for every run when it
// starts); it sends each target the notices after that target's cursor,
// in order, and moves the cursor — kept beside the store in
// <store>.notify.json, written crash-safely — once the target took one.
// A process killed between a checkpoint that added a notice and its
// delivery leaves the cursor before it, so the next process delivers it;
// one killed after delivering but before moving the cursor delivers it
// again, which receivers recognise by its key (run:seq, the webhook's
// Idempotency-Key). A failed delivery is retried with exponential backoff
// up to Config.Attempts attempts, the wait capped at Config.MaxDelay; then
// the notice is dropped for that target, with one log line. Secrets are
// read from the environment at delivery (the webhook's secret_env, and a
// webhook's or ntfy topic's url_env: a URL whose path is what lets anyone
// post) and go nowhere else: not into the state, the cursor or the logs,
// where a target's URL shows as its scheme and host only (Redact) — an
// unset variable is a failed delivery like any other.
package notify
