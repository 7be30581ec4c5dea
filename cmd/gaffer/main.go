package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/gaffer-dev/gaffer/agent"
	"github.com/gaffer-dev/gaffer/cli"
	"github.com/gaffer-dev/gaffer/profile"
)

// version, when set at build time (-ldflags "-X main.version=…"), names
// the version instead of the module's; see versionOf.
var version string

func main() {
	agent.SandboxMain() // as the sandbox helper, it never returns
	os.Exit(run())
}

// run runs the command line. The first SIGINT or SIGTERM ends the
// command's context: a run stops at its next checkpoint, serve drains.
// A second one ends the process at once, whatever it is waiting for.
func run() int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	// A closed stdout (`gaffer run … | head`) must not kill a run with
	// SIGPIPE: asked for, the signal only makes the write fail (EPIPE),
	// and cli's output says nothing more on that pipe. Programs gaffer
	// starts get the default action back.
	pipes := make(chan os.Signal, 1)
	signal.Notify(pipes, syscall.SIGPIPE)
	defer signal.Stop(pipes)
	go func() {
		<-sigs
		cancel()
		s := <-sigs
		fmt.Fprintf(os.Stderr, "gaffer: %v again: exiting now without waiting; a run continues from its last checkpoint with: gaffer resume\n", s)
		os.Exit(cli.ExitFailure)
	}()
	bi, ok := debug.ReadBuildInfo()
	err := cli.NewWithIO(versionOf(version, bi, ok), cli.IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Keys: profile.NewKeyVault(), LimitMemory: true, Program: os.Args[0],
		Getenv: os.Getenv, Hooks: testHooks(os.Getenv)}).RunContext(ctx, os.Args)
	cli.Report(os.Stderr, err)
	return cli.ExitCode(err)
}
