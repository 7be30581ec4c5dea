package script

import "testing"

// TestScriptIntegers: a script's whole numbers (match keys, usage) are
// refused, each on its line, when YAML or JSON would read them as another
// integer than they show: a float, another base, out of range.
func TestScriptIntegers(t *testing.T) {
	for _, tc := range []struct{ name, file, content, want string }{
		{"fraction", "s.yaml", "developer:\n  - phase: 1.5\n",
			`script s.yaml: line 2: developer[0].phase: want a whole number, got "1.5"`},
		{"whole float", "s.yaml", "developer:\n  - attempt: 2.0\n",
			`script s.yaml: line 2: developer[0].attempt: want a whole number, got "2.0"`},
		{"octal", "s.yaml", "developer:\n  - phase: 010\n",
			`script s.yaml: line 2: developer[0].phase: want a whole number in plain decimal digits (no leading 0, 0x, 0o, 0b or _), got "010"`},
		{"too large", "s.yaml", "architect:\n  - plan: p\n    usage: {input_tokens: 99999999999999999999}\n",
			`script s.yaml: line 3: architect[0].usage.input_tokens: want a whole number from -9223372036854775808 to 9223372036854775807, got "99999999999999999999"`},
		{"JSON fraction", "s.json", "{\"developer\": [\n{\"phase\": 1.5}]}",
			`script s.json: line 2: developer[0].phase: want a whole number, got "1.5"`},
		{"JSON too large", "s.json", "{\"developer\": [\n{\"phase\": 99999999999999999999}]}",
			`script s.json: line 2: developer[0].phase: want a whole number from -9223372036854775808 to 9223372036854775807, got "99999999999999999999"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.file, []byte(tc.content))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got  %v\nwant %s", err, tc.want)
			}
		})
	}
}
