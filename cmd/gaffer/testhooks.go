package main

import (
	"time"

	"github.com/gaffer-dev/gaffer/cli"
	"github.com/gaffer-dev/gaffer/profile"
)

// The kill tests' one way into a gaffer process they start: each variable,
// set to a duration, becomes the pause of cli.TestHooks of the same name.
// They are read here once, at start, and nowhere else; unset or not a
// positive duration, there is no pause.
//
//   - GAFFER_TEST_PAUSE_AFTER_COMMIT: every commit announces itself on
//     stdout and pauses before its checkpoint (the kill test SIGKILLs a
//     run between a commit and its checkpoint).
//   - GAFFER_TEST_PAUSE_AFTER_PUSH: the same after every push of a commit
//     to the shared remote (serve --remote; the two-host test).
//   - GAFFER_TEST_PAUSE_BEFORE_NOTIFY: every notice's delivery announces
//     itself and pauses first (between a notice's checkpoint and its
//     delivery).
//   - GAFFER_TEST_PAUSE_AFTER_RESTORE: putting the user's changes back
//     (--allow-dirty) announces itself and pauses before the stash's ref
//     is dropped.
//   - GAFFER_TEST_PAUSE_SESSION, set to ROLE/PHASE/ATTEMPT ("none": no
//     pause): every agent session announces itself, and the one named
//     pauses GAFFER_TEST_PAUSE_FOR (a duration; 30s when unset) before
//     it runs (the recovery kill tests).
const (
	pauseAfterCommitEnv  = "GAFFER_TEST_PAUSE_AFTER_COMMIT"
	pauseAfterPushEnv    = "GAFFER_TEST_PAUSE_AFTER_PUSH"
	pauseBeforeNotifyEnv = "GAFFER_TEST_PAUSE_BEFORE_NOTIFY"
	pauseAfterRestoreEnv = "GAFFER_TEST_PAUSE_AFTER_RESTORE"
	pauseSessionEnv      = "GAFFER_TEST_PAUSE_SESSION"
	pauseForEnv          = "GAFFER_TEST_PAUSE_FOR"
)

// testHooks reads the kill tests' pauses from getenv.
func testHooks(getenv func(string) string) cli.TestHooks {
	pause := func(name string) time.Duration {
		d, err := time.ParseDuration(getenv(name))
		if err != nil || d <= 0 {
			return 0
		}
		return d
	}
	return cli.TestHooks{
		AfterCommit:  pause(pauseAfterCommitEnv),
		AfterPush:    pause(pauseAfterPushEnv),
		BeforeNotify: pause(pauseBeforeNotifyEnv),
		AfterRestore: pause(pauseAfterRestoreEnv),
		Session:      profile.SessionPause{Which: getenv(pauseSessionEnv), For: pause(pauseForEnv)},
	}
}
