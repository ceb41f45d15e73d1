package tools

import (
	"context"
	"sync"
)

// readGuard remembers, per canonical resolved storage path, the hash of
// the content the Set last read or wrote, for Options.RequireRead.
type readGuard struct {
	mu     sync.Mutex
	hashes map[string]string
}

// remember records that the Set has seen content with the full hash h at
// name.
func (g *readGuard) remember(name, h string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.hashes == nil {
		g.hashes = make(map[string]string)
	}
	g.hashes[name] = h
}

// seen returns the hash last recorded for name.
func (g *readGuard) seen(name string) (string, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	h, ok := g.hashes[name]
	return h, ok
}

// checkRead enforces RequireRead for a change to the existing file at t
// whose current content has the full hash current.
func (s *Set) checkRead(t target, current string) error {
	if !s.opts.RequireRead {
		return nil
	}
	h, ok := s.guard.seen(t.resolved)
	if !ok {
		return retryf(KindNotRead, "'%s' has not been read yet; read it before changing it.", t.display)
	}
	if h != current {
		return retryf(KindConflict, "'%s' changed since it was read; read it again.", t.display)
	}
	return nil
}

// pathLocks serializes changes to one storage path within a Set. An entry
// lives only while someone holds or waits for it, so the map does not
// grow with the number of paths ever written.
type pathLocks struct {
	mu    sync.Mutex
	locks map[string]*pathLock
}

type pathLock struct {
	ch   chan struct{} // holds one token while the lock is held
	refs int
}

// lock acquires the lock of name, or gives up when ctx is done. The
// returned function releases it.
func (l *pathLocks) lock(ctx context.Context, name string) (func(), error) {
	l.mu.Lock()
	if l.locks == nil {
		l.locks = make(map[string]*pathLock)
	}
	pl := l.locks[name]
	if pl == nil {
		pl = &pathLock{ch: make(chan struct{}, 1)}
		l.locks[name] = pl
	}
	pl.refs++
	l.mu.Unlock()

	unlock := func() {
		<-pl.ch
		l.release(name, pl)
	}
	// A free lock is taken without asking for ctx's Done, which would
	// start the call deadline's timer for nothing.
	select {
	case pl.ch <- struct{}{}:
		return unlock, nil
	default:
	}
	select {
	case pl.ch <- struct{}{}:
		return unlock, nil
	case <-ctx.Done():
		l.release(name, pl)
		return nil, ctx.Err()
	}
}

func (l *pathLocks) release(name string, pl *pathLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	pl.refs--
	if pl.refs == 0 {
		delete(l.locks, name)
	}
}

// size returns the number of live entries (for tests).
func (l *pathLocks) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.locks)
}
