package tools

import (
	"context"
	"errors"
	"fmt"

	"github.com/fencefs/fencefs/backend"
	"github.com/fencefs/fencefs/policy"
)

// level is the kind of access a tool makes to the path it names; it picks
// the policy check and the permission hook's operation.
type level int

const (
	// levelRead: a direct read of one target (read_file, file_info).
	levelRead level = iota
	// levelWrite: a change of one target (write_file, edit_file,
	// create_directory).
	levelWrite
	// levelList: the root of list_directory (denied patterns only;
	// policy.OpRead).
	levelList
	// levelSearch: the root of a recursive walker (search_files,
	// find_files, list_files, grep: denied patterns only; policy.OpSearch).
	levelSearch
)

// Limits on names accepted as tool input, where the backend does not say.
const (
	maxNameBytes = 255
	maxPathBytes = 4096
)

// target is a tool path turned into storage paths.
type target struct {
	// display is the path as the caller wrote it, for result texts.
	display string
	// written is the canonical storage path, lexically cleaned: what the
	// path names before symlinks are followed.
	written string
	// resolved is the canonical storage path after every symlink; the
	// path to operate on.
	resolved string
	// via lists, when links were followed and a Permission hook will be
	// asked, the paths the resolution stepped on, for the hook's
	// Request.Via.
	via []string
	// tool and op are the tool that resolved the path and the operation
	// it makes, for the hook's requests about the links a walk below it
	// follows.
	tool string
	op   policy.Operation
}

// resolve turns the tool path p into storage paths and checks it: the
// refusals of names (control characters, drive prefixes, "~", over-long
// names), containment (lexical, then symlinks), the policy rules for lv
// and the Permission hook for tool. Refusals are *RetryError values;
// errors of the hook other than *policy.Denied are returned as they are
// (fatal).
//
// The rules judge the path as written before any link is followed, so a
// path in a denied directory gets one refusal whatever it names there (a
// file, a directory, nothing, a link leading anywhere or looping); then
// every path the resolution steps on, so a chain of links that passes
// through a denied directory is refused alike wherever it leads (back in,
// out, round a loop); and then the target.
func (s *Set) resolve(ctx context.Context, tool, p string, lv level) (target, error) {
	t := target{display: p, tool: tool, op: opOf(lv)}
	var err error
	if t.written, err = s.lexical(p, s.cwd); err != nil {
		return t, err
	}
	if err := s.checkRules(target{written: t.written, resolved: t.written}, lv); err != nil {
		return t, err
	}
	var hops *[]string
	if s.opts.Permission != nil {
		hops = &t.via
	}
	if t.resolved, err = s.followLinks(ctx, t.written, p, hops); err != nil {
		return t, err
	}
	if t.resolved != t.written {
		// Without a link on the way, the rules judged this pair above.
		if err := s.checkRules(t, lv); err != nil {
			return t, err
		}
	}
	return t, s.permit(ctx, tool, t, lv)
}

// hasDenied reports whether the Set has denied patterns to judge hops by.
func (s *Set) hasDenied() bool { return s.rules != nil && len(s.rules.Denied) > 0 }

// hopDenied returns the denied-pattern refusal of a path a resolution
// stepped on, as a *policy.Denied, or nil.
func (s *Set) hopDenied(hop string) *policy.Denied {
	var d *policy.Denied
	if errors.As(s.rules.CheckWalkRoot(hop, hop), &d) {
		return d
	}
	return nil
}

// recheck resolves t's path again after a change listener returned and
// applies the policy rules (not the Permission hook, which already
// answered). A path that now resolves elsewhere is a conflict.
func (s *Set) recheck(ctx context.Context, t target, lv level) error {
	again, err := s.followLinks(ctx, t.written, t.display, nil)
	if err != nil {
		return err
	}
	if again != t.resolved {
		return retryf(KindConflict, "Conflict: path '%s' changed while the change was being approved. Check it and retry.", t.display)
	}
	return s.checkRules(t, lv)
}

func (s *Set) checkRules(t target, lv level) error {
	var err error
	switch lv {
	case levelRead:
		err = s.rules.CheckRead(t.written, t.resolved)
	case levelWrite:
		err = s.rules.CheckWrite(t.written, t.resolved)
	default:
		err = s.rules.CheckWalkRoot(t.written, t.resolved)
	}
	if err == nil {
		return nil
	}
	var d *policy.Denied
	if errors.As(err, &d) {
		return s.deniedMsg(d, t)
	}
	return err
}

// deniedMsg words a policy refusal of t for the model: naming the path as
// written, in the spelling the model can pass back (rooted in a rooted
// namespace), and never the target of a link.
func (s *Set) deniedMsg(d *policy.Denied, t target) error {
	return &RetryError{Message: d.Naming(s.canonical(t.written)).Message, Kind: deniedKind(d)}
}

// permit asks the Permission hook about an access to t, by its resolved
// storage path and, when links led elsewhere, the paths on the way
// (Request.Via): a link outside a scope that leads into it is refused. A *policy.Denied becomes a *RetryError naming the path as
// written; other errors stay fatal.
func (s *Set) permit(ctx context.Context, tool string, t target, lv level) error {
	name := t.resolved
	if s.opts.Permission == nil {
		return nil
	}
	req := policy.Request{Tool: tool, Operation: opOf(lv), Path: s.canonical(name)}
	if t.resolved != t.written {
		req.Via = t.via
	}
	err := s.opts.Permission.Check(ctx, req)
	var d *policy.Denied
	var r *RetryError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &d):
		return s.deniedMsg(d, t)
	case errors.As(err, &r):
		return r
	}
	return err
}

// opOf is the operation a Permission hook is asked about for an access
// of level lv.
func opOf(lv level) policy.Operation {
	switch lv {
	case levelWrite:
		return policy.OpModify
	case levelSearch:
		return policy.OpSearch
	}
	return policy.OpRead
}

// lexical cleans the tool path p against the working directory cwd (a
// storage path) and returns its canonical storage path, refusing the
// spellings the contract forbids with the message of their reason.
func (s *Set) lexical(p, cwd string) (string, error) {
	out, err := s.paths.Resolve(s.b, s.rooted, p, cwd)
	if err == nil {
		return out, nil
	}
	if r := backend.ReasonOf(err); r != 0 {
		return "", refusal(r, p)
	}
	if errors.Is(err, backend.ErrInvalidPath) || errors.Is(err, backend.ErrOutside) {
		// A host path the backend does not map inside its root.
		return "", outsideMsg(p)
	}
	return "", s.storageErr(err, p)
}

// pathCleaner returns the path pipeline of the tools over b: the
// contract's refusals, control characters (they could forge lines of a
// tool's output) and the length limits of b, or defaults where b does not
// say.
func pathCleaner(b backend.Backend) backend.Cleaner {
	limit := backend.CapabilitiesOf(b).MaxNameBytes
	if limit <= 0 {
		limit = maxNameBytes
	}
	return backend.Cleaner{RefuseControl: true, MaxNameBytes: limit, MaxPathBytes: maxPathBytes}
}

// refusal words the refusal of the tool path p for reason r: the one
// place where a reason becomes the model's message.
func refusal(r backend.PathReason, p string) error {
	switch r {
	case backend.ReasonEmpty:
		return retryf(KindInvalid, "Path is empty. Name a file or directory, or '.' for the working directory.")
	case backend.ReasonNUL, backend.ReasonControl:
		return retryf(KindInvalid, "Path %q contains a control character; names with control characters are not allowed.", p)
	case backend.ReasonBackslash:
		return retryf(KindInvalid, "Path '%s' contains a backslash; separate directories with '/'.", p)
	case backend.ReasonDrive:
		return retryf(KindInvalid, "Path '%s' starts with a drive prefix; paths are relative to the working directory or start with '/'.", p)
	case backend.ReasonTooLong:
		return tooLongMsg(p)
	case backend.ReasonTilde:
		return retryf(KindInvalid, "Path '%s' has a name starting with '~'; home directories are not expanded. Use a path relative to the working directory.", p)
	case backend.ReasonInvalidUTF8:
		return retryf(KindInvalid, "Path %q is not valid UTF-8.", p)
	}
	// ReasonClimb, and the drive-like top-level name that only cleaning
	// shows ("x/../C:"), which no storage path may have.
	return outsideMsg(p)
}

// followLinks resolves the symlinks of the storage path written, judging
// every path the resolution steps on against the denied patterns: a hop
// into a denied directory refuses written with the denied message, before
// the chain is followed further (see [Set.resolve]). Errors the tools map
// alike (outside, loop, ...) become *RetryError values; anything else
// leaves the path unresolved, for the operation itself to report
// (backends never follow links, so that is safe). When hops is not nil it
// receives the paths stepped on, in canonical form, once a link led
// elsewhere.
func (s *Set) followLinks(ctx context.Context, written, display string, hops *[]string) (string, error) {
	var denied error
	var stepped []string
	var visit func(string) error
	if s.hasDenied() || hops != nil {
		// Without denied patterns or a hook there is nothing to judge on
		// the way, and the common call allocates no visit.
		visit = func(hop string) error {
			if d := s.hopDenied(hop); d != nil {
				denied = s.deniedMsg(d, target{written: written})
				return denied
			}
			if hops != nil {
				stepped = append(stepped, hop)
			}
			return nil
		}
	}
	resolved, err := backend.TraceSymlinks(ctx, s.b, written, visit)
	switch {
	case err == nil:
		if hops != nil && resolved != written {
			*hops = append(*hops, s.canonical(written))
			for _, h := range stepped {
				if h != written && h != resolved {
					*hops = append(*hops, s.canonical(h))
				}
			}
		}
		return resolved, nil
	case denied != nil:
		return "", denied
	case errors.Is(err, ctx.Err()) && ctx.Err() != nil:
		return "", err
	}
	if m := s.pathErr(err, display); m != nil {
		return "", m
	}
	return written, nil
}

// initialCwd validates Options.Cwd and returns it as a storage path.
func (s *Set) initialCwd(c string) (string, error) {
	if c == "" {
		return ".", nil
	}
	out, err := s.lexical(c, ".")
	if err != nil {
		return "", fmt.Errorf("tools: Cwd %q: %s", c, err)
	}
	if _, err := backend.ResolveSymlinks(context.Background(), s.b, out); errors.Is(err, backend.ErrOutside) || errors.Is(err, backend.ErrLoop) {
		return "", fmt.Errorf("tools: Cwd %q: %w", c, err)
	}
	return out, nil
}

// canonical returns the form of a storage path used in events, permission
// requests and diffs: rooted in a rooted namespace, relative otherwise.
func (s *Set) canonical(name string) string {
	if s.rooted {
		return backend.StorageToVirtual(name)
	}
	return name
}

// outputPath returns how a walker shows the storage path name: rooted
// canonical in a rooted namespace, relative to the working directory
// (with ".." where needed) in a plain one.
func (s *Set) outputPath(name string) string {
	if s.rooted {
		return backend.StorageToVirtual(name)
	}
	return backend.Rel(s.cwd, name)
}

// hasControl reports whether s holds a control character (U+0000 to
// U+001F, U+007F), which could forge lines of a tool's output.
func hasControl(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return true
		}
	}
	return false
}
