package demo

import _ "embed"

// Plan is the demo's plan (plan.md).
//
//go:embed plan.md
var Plan string

// Script is the demo's script for the script driver (script.yaml); its
// architect entry reads plan.md from the script's directory.
//
//go:embed script.yaml
var Script string
