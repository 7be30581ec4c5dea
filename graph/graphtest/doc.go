// Package graphtest holds test helpers for graphs built with package graph.
package graphtest
