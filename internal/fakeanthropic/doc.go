// Package fakeanthropic is a stand-in for the Anthropic Messages API on
// 127.0.0.1, for tests that drive a real agent CLI (Claude Code) offline.
//
// The test scripts the model's side with a Respond function: it sees each
// request (model, system prompt, messages) and returns a Reply — text, tool
// calls, or an API error. The server answers what Claude Code asks: HEAD /
// with 200, POST /v1/messages (streamed as server-sent events in the order
// message_start, ping, content_block_start/delta/stop per block,
// message_delta, message_stop, or as one JSON message when stream is false),
// and POST /v1/messages/count_tokens. Every messages request is recorded.
package fakeanthropic
