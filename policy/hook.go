package policy

import (
	"context"
	"slices"
)

// Operation is the kind of access a tool call makes, as a permission hook
// sees it.
type Operation string

// The operations tools report to a [Checker].
const (
	// OpRead: reading one file or its metadata, or listing a directory.
	OpRead Operation = "read"
	// OpSearch: walking a tree (search_files, find_files, list_files, grep).
	OpSearch Operation = "search"
	// OpModify: writing, editing or creating a directory.
	OpModify Operation = "modify"
)

// Request describes one access for a permission hook.
type Request struct {
	// Tool is the name of the tool making the access ("read_file", ...).
	Tool string
	// Operation is the kind of access.
	Operation Operation
	// Path is the canonical target: a rooted virtual path ("/tenant/x")
	// in a rooted namespace, a relative storage path ("x", "." for the
	// root) otherwise.
	Path string
	// Via lists, when symlinks led the access elsewhere, the other paths
	// it passed through on the way to Path, in the same form: first the
	// path as the caller wrote it, then every path the resolution stepped
	// on (the ancestors it walked down, each link). It is empty when the
	// written path is Path. A checker that confines paths judges these
	// too, so that a link outside its bounds cannot lead into them.
	Via []string
}

// Checker decides whether an access may go ahead. A nil error allows it;
// a *[Denied] refuses it with a message for the model; any other error is
// a failure of the checker itself, which tools treat as fatal.
type Checker interface {
	// Check judges one request before the tool touches storage.
	Check(ctx context.Context, req Request) error
}

// CheckerFunc adapts a function to the [Checker] interface.
type CheckerFunc func(ctx context.Context, req Request) error

// Check calls f.
func (f CheckerFunc) Check(ctx context.Context, req Request) error { return f(ctx, req) }

// Approver asks someone (a user, a policy service) whether an access may
// go ahead. It may block, and should return when ctx is done.
type Approver func(ctx context.Context, req Request) (bool, error)

// Approval returns a Checker that asks approve about every request whose
// operation is one of ops and lets the others through. A refusal is a
// *[Denied] with the message "Operation '<op>' on '<path>' was not
// approved."; an error from approve is returned unchanged. A nil approve
// refuses every listed operation, so a missing approver fails closed.
func Approval(ops []Operation, approve Approver) Checker {
	return approval{ops: slices.Clone(ops), approve: approve}
}

type approval struct {
	ops     []Operation
	approve Approver
}

func (a approval) Check(ctx context.Context, req Request) error {
	if !slices.Contains(a.ops, req.Operation) {
		return nil
	}
	ok := false
	if a.approve != nil {
		var err error
		if ok, err = a.approve(ctx, req); err != nil {
			return err
		}
	}
	if ok {
		return nil
	}
	return newDenied(req.Path, "", func(p string) string {
		return "Operation " + quote(string(req.Operation)) + " on " + quote(p) + " was not approved."
	})
}

// All returns a Checker that runs checkers in order and returns the first
// error, so a cheap static check placed first spares a slow approver the
// question. Nil checkers are skipped.
func All(checkers ...Checker) Checker {
	list := make(all, 0, len(checkers))
	for _, c := range checkers {
		if c != nil {
			list = append(list, c)
		}
	}
	return list
}

type all []Checker

func (cs all) Check(ctx context.Context, req Request) error {
	for _, c := range cs {
		if err := c.Check(ctx, req); err != nil {
			return err
		}
	}
	return nil
}
