// Package atomicfile replaces files so that a crash leaves either the old
// content or the new, never a mix, and names the temporary files it does
// that with in one way that every package recognises.
//
// WriteFile writes the data to a temporary file in the target's
// directory, fsyncs it, sets the mode, renames it over the target and
// fsyncs the directory: the new content is on disk before it becomes
// visible under the target's name, and the rename is on disk before
// WriteFile returns. File systems and platforms that cannot sync a
// directory (SyncDir) are not an error.
//
// A temporary file is named "." + NAME + TempMarker + random, beside the
// NAME it replaces (CreateTemp). A process killed between creating it and
// the rename leaves it behind. IsTemp tells such a leftover from the
// user's files (workspace never reports or commits one, and its ResetTo
// removes them), TempTarget gives the name it was to replace, and
// RemoveTemps removes the leftovers of one target.
package atomicfile
