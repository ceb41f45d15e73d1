// Package local is the local-disk backend of fencefs and a real security
// boundary: nothing it does reads, writes or lists a byte outside its root
// directory, whatever symlinks an agent or another process creates, swaps
// or races in.
//
// Every open is relative to a directory descriptor of the root, made with
// openat2 and RESOLVE_BENEATH,
// RESOLVE_NO_SYMLINKS and RESOLVE_NO_MAGICLINKS, so that the kernel itself
// refuses to leave the root or to follow any link. On kernels without
// openat2 the same semantics are built on [os.Root], checking the identity
// of every component opened. Backend operations never follow symlinks;
// callers that want links followed resolve the path first with
// [FS.ResolveSymlinks], judge the target, and then operate on it. If a link
// is swapped in between, the operation fails instead of being redirected.
//
// The root's descriptor is held while a call uses it and then by a pool
// the process shares, bounded by its descriptor limit, so that a server
// with many backends holds no descriptor per idle backend. A root the
// pool gave back is opened again by its path and must be the very
// directory New opened (device and inode); a root path moved or replaced
// meanwhile fails the calls instead of redirecting them. A process out of
// descriptors gets its idle roots back and an error that says so.
//
// Files are opened non-blocking and checked with fstat before use, so
// FIFOs, sockets and devices are refused and never block. Writes go to a
// temporary file beside the target and are renamed over it; preconditions
// are checked under an advisory lock on the parent directory, which makes
// compare-and-swap hold between processes sharing a root. Writers of one
// process take that lock in the order they came, and a writer waits for
// it only until its context ends.
//
// The package builds on Linux only.
package local
