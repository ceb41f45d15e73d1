// Package policy decides which paths the fencefs tools may touch.
//
// [Rules] hold the allowed, denied and protected patterns of a tool set and
// judge canonical storage paths with them, both as written and as their
// symlinks resolve, applying denied and protected patterns to every
// ancestor directory too. Patterns use fnmatch syntax (see [Match]), where
// "*" spans "/". [HiddenBelow] is the dotfile rule walkers apply whatever
// the patterns say.
//
// [Scope] confines a rooted namespace to some subtrees, and [Checker] is the
// permission hook a host plugs in: [Approval] asks a person or service
// about chosen operations, and [All] chains checkers. Every refusal is a
// *[Denied] whose message is the text shown to the model.
package policy
