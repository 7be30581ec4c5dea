// Package inbox is gaffer's attention inbox: the web pages `gaffer serve
// --ui-addr` serves. Server is an http.Handler over a host.Service (the
// runs, their status, and Answer: the same code path as gaffer approve and
// reject, so a run parked in serve continues at once), the runner's events
// (Subscribe, for the server-sent events that update a page live) and the
// repository (each phase's diff). "/" lists the runs, those that need a
// person first; "/runs/{id}" shows one run whole (plan, phase tree,
// bounded diffs, reviews, recovery's question, cost by role, bounded
// transcripts) with the forms that answer it; "/runs/{id}/events" streams
// its changes. Pages are html/template, embedded, with a little plain JS
// and no build step. Security: every form carries a CSRF token (an HMAC of
// the session cookie, HttpOnly and SameSite=Strict) and a POST without it
// is refused 403; with a Token, every request needs it as a bearer token
// or a session cookie from a "?token=" login; without one, requests must
// name a loopback host (no DNS rebinding). No page shows a secret: the
// token is never rendered, nor any environment value.
package inbox
