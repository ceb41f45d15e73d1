package main

// The help texts of commands whose code is the default build's alone:
// the one-shot build prints them alike (fencefs help TOPIC).

// overlayUsage is the help of fencefs overlay.
const overlayUsage = `Usage: fencefs overlay changes|diff|commit|discard SPEC [PATH...]

Reviews and lands what an overlay mount holds. SPEC is the mount's spec,
overlay:BASE+UPPER (a '+' or '%' inside BASE or UPPER written %2B or %25).
  changes   list the changed paths: created, modified, deleted, renamed (from)
  diff      print the unified diff of the changes against the base as it is now
  commit    land the changes on the base (BASE must be writable), path by path with
            compare-and-swap; a base file changed meanwhile is a conflict, kept in
            the overlay, and the exit code is 1
  discard   throw every change away (takes no PATH)
With PATHs, changes, diff and commit take only the changes at or inside them.
`

// checkpointsUsage is the synopsis of fencefs checkpoints.
const checkpointsUsage = "fencefs checkpoints [flags] STORE list|show|diff|restore [ARGS]\n\n" +
	"Lists, shows, diffs and restores the checkpoints of the namespace the flags describe (--root or\n" +
	"--mount, as for call), kept in STORE: a mount spec of its own (local:DIR, s3://BUCKET/PREFIX?...,\n" +
	"sftp://USER@HOST/DIR?...), outside the namespace, where a host journaling the tools (package\n" +
	"checkpoint) keeps them.\n" +
	"  list [--label L] [--limit N]             newest first\n" +
	"  show N                                   the paths checkpoint N changed, before and after\n" +
	"  diff N [--path P]...                     what restoring to N would change, as a unified diff\n" +
	"  restore N [--force | --skip-conflicts] [--path P]... [--dry-run]\n" +
	"Checkpoint N is the state once change N was made; 0 is the state before the first change. A path\n" +
	"someone else changed since its last recorded change is a conflict: the restore is then refused,\n" +
	"listing them, unless --force (overwrite) or --skip-conflicts (leave them). A restore is a\n" +
	"checkpoint itself: restore to its number minus one to undo it.\n" +
	"Exit 0: done. Exit 3: a restore refused over conflicts (listed on stderr). Exit 1: anything else."

// auditUsage is the help of fencefs audit.
const auditUsage = `Usage: fencefs audit verify [--prev HASH] [--head HASH [--allow-growth]] FILE

Checks the hash chain of an audit log that serve --audit wrote: each line carries the SHA-256
of the line before it, so a line edited, removed or moved breaks the chain at the next line.
  --prev HASH      the head of the log this file continues (a rotated log's); default the genesis
  --head HASH      the head the server logged last ("audit head"), kept where the log's writer
                   cannot reach: lines cut off the end, or rewritten from some line on, are caught
  --allow-growth   with --head: accept lines after it (a head the server logged while it ran on)
Exit 0: the chain holds (its line count and head on stdout). Exit 1: the first bad line, on stderr.
`
