package agent

import (
	"reflect"
	"testing"

	"github.com/gaffer-dev/gaffer/story"
)

func TestParseFacts(t *testing.T) {
	tests := []struct {
		name string
		in   string
		ok   bool
		want story.Facts
	}{
		{"fenced, with prose", "Done: added TTS.\n\n```json\n{\"decisions\": [{\"topic\": \"tts\", \"what\": \"use google-cloud-tts\", \"why\": \"languages\"}], \"methods\": [\"TTS.Say(text string) error\"], \"dependencies\": [\"google-cloud-tts\"], \"commands\": [\"NOT TODO: on-device TTS\"], \"recommendations\": [\"watch latency\"]}\n```\n", true,
			story.Facts{Decisions: []story.Decision{{Topic: "tts", What: "use google-cloud-tts", Why: "languages"}}, Methods: []string{"TTS.Say(text string) error"},
				Dependencies: []string{"google-cloud-tts"}, Commands: []string{"NOT TODO: on-device TTS"}, Recommendations: []string{"watch latency"}}},
		{"a decision as a string, wrong types left out", `{"decisions": ["keep it simple", 3], "methods": "not a list", "dependencies": [" x ", ""]}`, true,
			story.Facts{Decisions: []story.Decision{{What: "keep it simple"}}, Dependencies: []string{"x"}}},
		{"an unrelated object first", `{"approved": true} then {"commands": ["TODO: docs"]}`, true, story.Facts{Commands: []string{"TODO: docs"}}},
		{"no object", "I changed calc.go and ran the tests.", false, story.Facts{}},
		{"an object without story fields", `{"approved": true}`, false, story.Facts{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := ParseFacts(tc.in)
			if ok != tc.ok || !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseFacts = %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}
