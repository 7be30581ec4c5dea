// Package tmpdir makes the temporary directories of a gaffer process so
// that a later gaffer process can tell, and remove, those a killed one
// left. Make names each gaffer-KIND-pPID-sSTART-RANDOM in the temporary
// directory (START is the owner's start time: field 22 of /proc/PID/stat
// on Linux, 0 elsewhere) and holds an exclusive flock on a .owner file
// inside it until Remove. Sweep removes a directory of that form only
// when it belongs to the user sweeping, its owner process is gone (no
// such pid, a zombie, or a pid reused by a process that started at
// another time) and its .owner lock is free: a live process's directory,
// even one in another PID namespace sharing the directory, is never
// removed. Any doubt keeps the directory.
package tmpdir
