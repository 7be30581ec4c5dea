// Package fakellm serves scripted model conversations on loopback for the
// llm driver's tests: an OpenAI-compatible /v1/chat/completions endpoint
// and an Anthropic /v1/messages endpoint, spoken to by the real langchaingo
// clients. Each request is answered with the next Turn of the script, or
// by a function of the request (NewOpenAIFunc, NewAnthropicFunc), which
// lets a whole workflow's roles be told apart by their system prompts.
package fakellm
