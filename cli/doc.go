// Package cli is gaffer's command line, built on urfave/cli/v2: New
// returns the application with its global flags (--repo, --store,
// --profile, --log-level, --log-format, each also read from a GAFFER_*
// environment variable) and its commands. Each command lives in a file of
// its own as an options struct with a Run(ctx, w) method that writes to
// the io.Writer it is given; the urfave/cli glue only reads flags into
// that struct. Commands return errors and never exit: main hands the error
// to Report, which prints it, and to ExitCode, which maps it to one of the
// documented exit codes (see exitcodes.go); an *ExitError carries an
// explicit code through wrapping.
package cli
