// Package golden checks what a porting example prints against the output
// kept in examples/porting/testdata, which both versions of the program
// (the new API's and today's) must print.
package golden
