// Package label names an agent session in the drivers' progress lines
// ("architect r0", "developer p2 a1", "reviewer p2 a1 i3").
package label
