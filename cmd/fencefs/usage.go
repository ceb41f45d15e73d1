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
