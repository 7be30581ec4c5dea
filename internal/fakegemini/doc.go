// Package fakegemini is a scripted Gemini API (generateContent) server on
// 127.0.0.1 for tests that drive the real Gemini CLI offline, pointed at it
// with GOOGLE_GEMINI_BASE_URL: POST /v1beta/models/MODEL:streamGenerateContent
// answers with the server-sent events the CLI reads (one
// GenerateContentResponse with the model's text and function calls, and
// usage), and :generateContent with the same response as one JSON object;
// or either answers with an HTTP error status the script chooses — a
// provider outage. The model's side is a function of the request, called
// one request at a time.
package fakegemini
