// Package fakeresponses is a scripted OpenAI Responses API server on
// 127.0.0.1 for tests that drive the real Codex CLI offline (see
// AGENT-CLIS.md): POST /v1/responses answers with the server-sent events
// Codex reads (response.created, response.output_item.added and .done for
// each message or function call, response.completed with usage), or with
// an HTTP error status the script chooses — a provider outage. The model's
// side is a function of the request, called one request at a time.
package fakeresponses
