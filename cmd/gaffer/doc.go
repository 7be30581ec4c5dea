// Command gaffer plans, runs and reviews coding-agent work in phases,
// durably. main only builds the application with cli.New, runs it with a
// context cancelled on SIGINT and SIGTERM, prints any error with
// cli.Report and exits with cli.ExitCode; the commands and the exit codes
// are documented in package cli.
package main
