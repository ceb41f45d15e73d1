// Package checkpoint records, before every change an agent's file tools
// make, the pre-image of each path the change touches, and restores a
// namespace to any checkpoint exactly, on every backend.
//
// A [Journal] watches a [tools.Set] through the change and event
// listeners of each call's context ([Journal.Bind]): a change request
// arrives after every check passed and before storage is touched, and the
// journal reads the namespace backend the tools use, stores the content
// of every file the change replaces or removes (once per SHA-256, in a
// store that is itself any writable backend: a local directory, an S3
// prefix, an SFTP directory, outside the agent's namespace) and writes
// one record naming each path's state before. A change whose pre-images
// cannot be stored is refused: journal and change are all or nothing.
// The events the tools emit once the change committed give each path's
// state after, which the journal saves with its next record (or on
// [Journal.Flush] and [Journal.Mark]).
//
// Checkpoint N is the state once record N committed (0 is the state
// before the first change). [Journal.Restore] returns every path the
// changes since N touched to its state at N, and only those: modified
// files get their content back, created files and directories are
// removed, deleted ones re-created (with their mode, where the backend
// stores modes and can set them), moved ones moved back. It is guarded by
// compare-and-swap: a path whose state is not the one the journal
// recorded after its last change was changed by someone else, and the
// restore is refused whole listing those conflicts ([ConflictError]),
// unless forced or told to skip them. Every write of a restore carries a
// precondition on the state the restore read (a version where the backend
// has versions, the content hash or create-only otherwise), so a
// concurrent writer is never overwritten unseen. A restore is itself
// recorded, intent first, so a restore cut short is completed by the same
// restore run again, and a completed one is undone by restoring to the
// checkpoint just before it (redo).
//
// # Store layout
//
// Under Options.Prefix the store holds blobs/<sha256> (content, written
// create-only, never changed) and journal/<20-digit sequence>.json (one
// object per record, written create-only). Nothing is ever appended to or
// rewritten, so the layout works on object stores without append and
// several journals may share a store where its preconditions are atomic:
// two writers never take the same sequence number. A record carries the
// after-states of earlier changes, so a change costs one record and, when
// its pre-image is new, one content object: on S3 two PUTs (and the GET
// that reads the pre-image).
//
// With Options.Segments, on a store that writes files in place
// ([backend.LogOpener]: a local directory) records are instead frames (length, CRC-32C, JSON) of
// segment files, journal/<20-digit ns>-<16 hex>.log, one per writing
// journal, filled with zeros ahead so that a record is made durable by
// one fdatasync that changes no metadata; journal/seq.lock's flock keeps
// sequence numbers unique between journals. A torn last frame (a crash
// mid-write) is ignored. Both layouts are read.
//
// # Bounds
//
// [Journal.Prune] (run by [Journal.Mark] when Options bound the journal)
// drops the oldest changes beyond KeepCount, KeepAge and KeepBytes and
// collects the content no remaining change references. [Journal.Usage]
// is what the store holds, for a tenant's quota to count.
package checkpoint
