#!/bin/sh
# make.sh GAFFER_PREV — writes the store of the previous release's runs
# (see README.md) with the gaffer binary GAFFER_PREV, built from commit
# 9c44d1a, and packs it as prev-9c44d1a.tar.gz beside this script.
set -eu
PREV=${1:?usage: make.sh PATH-TO-GAFFER-9c44d1a}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=/tmp/gaffer-prev-fixture # fixed: the stores name their work trees by absolute path
rm -rf "$ROOT"
mkdir -p "$ROOT/in"
cp "$HERE/phased.md" "$HERE/task.md" "$HERE/phased.yaml" "$HERE/task.yaml" "$ROOT/in/"
export GAFFER_REPRODUCIBLE_DATES=1 GIT_AUTHOR_DATE='2026-01-01T00:00:00Z' GIT_COMMITTER_DATE='2026-01-01T00:00:00Z'

repo() { # repo DIR: a repository with one commit
	mkdir -p "$1"
	git -C "$1" init -q -b main
	git -C "$1" config user.name fixture
	git -C "$1" config user.email fixture@example.com
	printf 'A repository for gaffer'"'"'s fixture.\n' >"$1/README.txt"
	git -C "$1" add -A
	git -C "$1" commit -q -m base
}

# killat PATTERN N -- ARGS: runs gaffer with ARGS and SIGKILLs it when its
# output shows PATTERN the Nth time.
killat() {
	pat=$1 n=$2
	shift 3
	out=$ROOT/out.$$
	: >"$out"
	"$PREV" "$@" >"$out" 2>&1 &
	pid=$!
	while [ "$(grep -c "$pat" "$out")" -lt "$n" ]; do
		kill -0 $pid 2>/dev/null || { cat "$out"; echo "gaffer ended before $pat"; exit 1; }
		sleep 0.1
	done
	sleep 1
	kill -9 $pid
	wait $pid 2>/dev/null || true
	rm -f "$out"
}

# The three runs; each takes the repository and the mode's flags.
approval() { # stopped at approval: a phased plan whose first phase has two tasks with disjoint files
	d=$1
	shift
	"$PREV" --repo "$d" run --plan "$ROOT/in/phased.md" --script "$ROOT/in/phased.yaml" --run-id r-20260101-approval "$@" </dev/null || true
}
midphase() { # mid-phase: phase 2's session has written one file and sleeps
	d=$1
	shift
	touch "$ROOT/slow"
	killat 'gaffer-test: session developer/2/1' 1 -- --repo "$d" run --plan "$ROOT/in/phased.md" --script "$ROOT/in/phased.yaml" \
		--run-id r-20260101-midphase --auto-approve "$@"
	rm -f "$ROOT/slow"
}
midreview() { # mid-review: task mode, the first task's second review (the first rejected it; the same session iterated)
	d=$1
	shift
	GAFFER_TEST_PAUSE_FOR=5s killat 'gaffer-test: session reviewer/1/1' 2 -- --repo "$d" run --plan "$ROOT/in/task.md" \
		--script "$ROOT/in/task.yaml" --run-id r-20260101-midreview --auto-approve "$@"
}

# Every session is announced; the first task's reviews pause.
export GAFFER_TEST_PAUSE_SESSION=reviewer/1/1
# In its own work tree: the three runs in one repository.
repo "$ROOT/own"
approval "$ROOT/own"
midphase "$ROOT/own"
midreview "$ROOT/own"
# In place: one run per checkout (a stopped run leaves its checkout dirty).
for r in approval midphase midreview; do
	repo "$ROOT/inplace-$r"
	$r "$ROOT/inplace-$r" --in-place
done
sleep 25 # the killed sessions' sleeps end
for d in "$ROOT"/own "$ROOT"/inplace-*; do
	"$PREV" --repo "$d" list
done
tar -C /tmp -czf "$HERE/prev-9c44d1a.tar.gz" gaffer-prev-fixture
ls -l "$HERE/prev-9c44d1a.tar.gz"
