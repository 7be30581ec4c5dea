// Package gitcmd is the one way gaffer runs the git binary. Every command
// runs with the settings of the repository that could make git run a
// program turned off (hooks, fsmonitor, an ssh command, an askpass or
// credential helper, signing, the ext:: transport): an agent that wrote
// the repository's .git/config or .git/hooks must not get gaffer, or the
// next run, to execute what it planted. Settings gaffer's commands do not
// need are off for all of them; the few that fetch or push keep the user's
// ssh command and credential helpers (Network), since they run in gaffer's
// own mirror, whose configuration no agent writes. go-git, which gaffer
// uses for everything else, runs no hooks, fsmonitor, filters or helpers.
// Filter drivers (filter.NAME.clean and .smudge) cannot be turned off by
// name in advance; a change to .git/config during a session is refused
// instead (see package nodes).
//
// A work tree an agent has worked in is named with Repo: its git
// directory, the one gaffer made, and its work tree, so that git never
// reads the tree's .git file, which the agent could have rewritten to
// name a repository of its own (whose filters git would run). Every
// command but those that fetch or push runs without the variables of
// the environment named like secrets (Environ): a program git runs
// inherits what git has.
package gitcmd
