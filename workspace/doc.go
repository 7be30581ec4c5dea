// Package workspace is the workflow's hands on git, through go-git: it
// reads HEAD and the status of the work tree, commits one phase at a time
// with trailers, measures what a phase changed, undoes a failed attempt,
// and writes the execution directory's files crash-safely.
//
// # The contract with the workflow
//
// Before a phase the workflow records Head (the pre-phase commit, saved in
// a checkpoint before the agent starts) and Untracked (the user's files
// that are neither tracked nor ignored: a notes.txt). After the phase,
// Commit stages everything the agent did — new, modified and deleted
// files, respecting .gitignore — except the paths in
// CommitOptions.Exclude, which is given that snapshot, and ends the
// message with a git trailer block (Gaffer-Run, Gaffer-Phase,
// Gaffer-Attempt). FindCommit with HasTrailers finds that commit again, so
// a resumed phase adopts its own commit instead of committing twice. Both
// the pre-phase commit and the snapshot belong in the checkpoint written
// before the agent starts: a snapshot taken once the agent has begun would
// protect the agent's own files.
//
// A failed attempt is undone with ResetTo(pre-phase commit, snapshot): the
// branch goes back, tracked files are restored, and what the attempt
// created or committed is removed — but ignored files (a .env, build
// output) and the snapshot's files are never touched. go-git's own hard
// reset deletes untracked and ignored files, so it is not used. ResetTo
// is idempotent: a run killed half-way through one, or killed mid-phase
// with a dirty tree, is put right by running it again.
//
// # The user's uncommitted changes, and the work tree's lock
//
// Stash records a dirty tree's staged entries and work-tree files
// (untracked ones included, ignored ones not) as two commits kept by
// refs/gaffer/stash/NAME, without touching the tree; RestoreStash puts
// them back byte for byte on top of a later HEAD and names the paths that
// HEAD changed too; DropStash removes the ref. LockWorkTree is an flock on
// .git/gaffer-worktree.lock naming the holder's pid, host and run, so two
// processes never execute runs in one work tree, whatever their stores.
//
// # What is written, and how
//
// Objects go through go-git's object store. The index and refs are
// written with git's own lock protocol (FILE.lock created exclusively,
// synced, renamed over FILE), so the git command and this package never
// write them at once; a lock left by a crashed git process is reported as
// ErrLocked, as git reports it. Moving a branch checks it still points
// where it did (ErrConcurrentUpdate otherwise) and appends to the reflog,
// so a commit dropped by ResetTo can be recovered with `git reflog`. Work
// tree files are replaced by renaming a complete temporary file over them
// (internal/atomicfile names it); WriteFileAtomic also syncs the file and
// its directory. The index is
// written before the branch moves: a crash in between leaves the branch
// where it was and the change staged, which the workflow sees as a dirty
// tree and resets.
//
// # Ignore rules
//
// .gitignore files in every directory, .git/info/exclude and
// core.excludesFile (by default $XDG_CONFIG_HOME/git/ignore) are honoured,
// with go-git's pattern matcher; tracked files are never ignored; ignored
// directories are not descended into; nested repositories are left alone
// and listed by Status as "dir/".
//
// # Limits
//
// Status, Commit and ResetTo walk the whole work tree and trust the
// index's stat data to avoid reading unchanged files, like `git status`
// without a file system monitor: cost grows with the number of files.
// StatusOutside and UntrackedOutside leave out directories the caller
// ignores (the workflow's execution directory) without visiting them. A
// Repo reads each tree object once and keeps it (a tree's hash is its
// content), so flattening a new HEAD reads only the trees that changed.
// Commit holds one file at a time in memory. Content filters
// (core.autocrlf, .gitattributes, LFS) are not applied. Sparse checkouts
// and submodules are carried as they are but not managed.
package workspace
