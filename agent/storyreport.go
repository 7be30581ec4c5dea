package agent

import (
	"encoding/json"
	"strings"

	"github.com/gaffer-dev/gaffer/story"
)

// storyKeys are the fields of the Task Story's structured report; an
// object holding one of them is the report.
var storyKeys = []string{"decisions", "commands", "methods", "dependencies", "recommendations", "requirements"}

// StoryInstructions asks an agent for the Task Story's structured report
// at the end of its final message: the cli driver's template and the llm
// driver's system prompt both use it.
const StoryInstructions = `End your final message with one JSON object in a ` + "```json" + ` fence, for the agents after you:
{"decisions": [{"topic": "...", "what": "...", "why": "..."}], "commands": ["TODO: ...", "NOT TODO: ..."],
 "methods": ["Name(signature)"], "dependencies": ["..."], "recommendations": ["..."]}
Leave out what you have nothing for.`

// ParseFacts reads the Task Story's structured report from an agent's
// final message, tolerantly: the first JSON object (fenced or not) that
// has one of the fields decisions, commands, methods, dependencies,
// recommendations or requirements. A field of the wrong type is left out,
// a decision may be a plain string (its what), and strings are trimmed.
// ok is false when the message holds no such object.
func ParseFacts(text string) (f story.Facts, ok bool) {
	var obj map[string]json.RawMessage
	for _, k := range storyKeys {
		o, err := findObject(text, k)
		if err != nil {
			return story.Facts{}, false
		}
		if _, has := o[k]; has {
			obj = o
			break
		}
	}
	if obj == nil {
		return story.Facts{}, false
	}
	strs := func(k string) []string {
		var raw []json.RawMessage
		if json.Unmarshal(obj[k], &raw) != nil {
			return nil
		}
		var out []string
		for _, r := range raw {
			var s string
			if json.Unmarshal(r, &s) == nil && strings.TrimSpace(s) != "" {
				out = append(out, strings.TrimSpace(s))
			}
		}
		return out
	}
	var raw []json.RawMessage
	if json.Unmarshal(obj["decisions"], &raw) == nil {
		for _, r := range raw {
			var d story.Decision
			var s string
			switch {
			case json.Unmarshal(r, &s) == nil:
				d.What = s
			case json.Unmarshal(r, &d) != nil:
				continue
			}
			d.Topic, d.What, d.Why = strings.TrimSpace(d.Topic), strings.TrimSpace(d.What), strings.TrimSpace(d.Why)
			if d.What != "" {
				f.Decisions = append(f.Decisions, d)
			}
		}
	}
	f.Commands, f.Methods, f.Dependencies = strs("commands"), strs("methods"), strs("dependencies")
	f.Recommendations, f.Requirements = strs("recommendations"), strs("requirements")
	return f, true
}
