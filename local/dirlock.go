//go:build linux

package local

import (
	"context"
	"sync"

	"golang.org/x/sys/unix"
)

// The directory lock that makes a commit's check and rename one step has
// two layers. Between processes it is an exclusive flock on the directory.
// Inside the process a FIFO queue per directory stands in front of the
// flock, so that only the writer at the head of the queue competes for
// it: writers of one process take their turns in the order they came,
// and a waiter can no longer keep losing to newcomers that happen to
// poll at the right moment. The head waits for the flock with a blocking
// flock in a goroutine, which another process's unlock wakes at once;
// its wait ends with its context.
//
// The queues are kept per process, not per FS: the flock itself is held
// by the process, and two backends over overlapping roots lock the same
// directories.
var dirLocks = lockTable{locks: make(map[dirKey]*dirLock)}

// dirKey names a directory by device and inode. A key cannot be reused
// while its entry exists, since every user of the entry holds a
// descriptor of the directory.
type dirKey struct{ dev, ino uint64 }

// lockTable holds the queues of the directories that are locked or
// waited for.
type lockTable struct {
	mu    sync.Mutex
	locks map[dirKey]*dirLock
}

// dirLock is the in-process queue of one directory, guarded by
// lockTable.mu.
type dirLock struct {
	key     dirKey
	refs    int             // holder, waiters and a pending flock
	held    bool            // a writer has its turn
	waiters []chan struct{} // in arrival order; closed to give the turn
	// pending is a blocking flock whose waiter's context ended before
	// the kernel granted it. The next writer to have its turn takes it
	// over instead of starting a second one, so at most one thread per
	// directory blocks in flock.
	pending *pendingFlock
}

// pendingFlock is a blocking flock in flight on fd, a duplicate of a
// waiter's directory descriptor that the flock goroutine owns.
type pendingFlock struct {
	fd      int
	done    bool          // the kernel answered; err is set
	err     error         // the flock's answer
	granted chan struct{} // closed when done
	waiting bool          // a writer with the turn waits for it
}

// heldLock is a taken directory lock; release gives it back.
type heldLock struct {
	l  *dirLock
	fd int  // the descriptor the flock is held by
	ow bool // fd is a duplicate this lock owns and closes
}

// lockDir takes the directory lock of dirfd: first its turn in the
// process's queue for the directory, then the flock. It waits until ctx
// ends, and returns ctx's error then.
func lockDir(ctx context.Context, dirfd int) (*heldLock, error) {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(dirfd, &st) }); err != nil {
		return nil, err
	}
	l, err := dirLocks.turn(ctx, dirKey{uint64(st.Dev), st.Ino})
	if err != nil {
		return nil, err
	}
	h, err := dirLocks.flock(ctx, l, dirfd)
	if err != nil {
		dirLocks.pass(l)
		return nil, err
	}
	return h, nil
}

// release unlocks the flock and gives the turn to the next writer.
func (h *heldLock) release() {
	unix.Flock(h.fd, unix.LOCK_UN)
	if h.ow {
		unix.Close(h.fd)
	}
	dirLocks.pass(h.l)
}

// turn waits for the caller's turn at the directory key, in arrival
// order, until ctx ends.
func (t *lockTable) turn(ctx context.Context, key dirKey) (*dirLock, error) {
	t.mu.Lock()
	l := t.locks[key]
	if l == nil {
		l = &dirLock{key: key}
		t.locks[key] = l
	}
	l.refs++
	if !l.held {
		l.held = true
		t.mu.Unlock()
		return l, nil
	}
	ch := make(chan struct{})
	l.waiters = append(l.waiters, ch)
	t.mu.Unlock()
	select {
	case <-ch:
		return l, nil
	case <-ctx.Done():
	}
	t.mu.Lock()
	for i, w := range l.waiters {
		if w == ch {
			l.waiters = append(l.waiters[:i], l.waiters[i+1:]...)
			t.unref(l)
			t.mu.Unlock()
			return nil, ctx.Err()
		}
	}
	// The turn came as the context ended: pass it on.
	t.mu.Unlock()
	t.pass(l)
	return nil, ctx.Err()
}

// pass gives the turn of l to its next waiter, or frees it.
func (t *lockTable) pass(l *dirLock) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(l.waiters) > 0 {
		close(l.waiters[0])
		l.waiters = l.waiters[1:]
	} else {
		l.held = false
		t.dropPending(l)
	}
	t.unref(l)
}

// dropPending gives back a flock that was granted after its waiter left,
// once no writer has the turn to take it over. The caller holds t.mu.
func (t *lockTable) dropPending(l *dirLock) {
	p := l.pending
	if p == nil || !p.done || p.waiting {
		return
	}
	l.pending = nil
	if p.err == nil {
		unix.Flock(p.fd, unix.LOCK_UN)
	}
	unix.Close(p.fd)
	t.unref(l)
}

// unref drops one reference to l and forgets l with the last one. The
// caller holds t.mu.
func (t *lockTable) unref(l *dirLock) {
	l.refs--
	if l.refs == 0 {
		delete(t.locks, l.key)
	}
}

// flock takes the flock of l's directory for the writer that has the
// turn, through dirfd: at once when no other process holds it, else by
// a blocking flock (its own, or one a cancelled writer left pending)
// that it waits for until ctx ends.
func (t *lockTable) flock(ctx context.Context, l *dirLock, dirfd int) (*heldLock, error) {
	t.mu.Lock()
	p := l.pending
	if p == nil {
		t.mu.Unlock()
		err := ignoringEINTR(func() error { return unix.Flock(dirfd, unix.LOCK_EX|unix.LOCK_NB) })
		if err != unix.EWOULDBLOCK {
			if err != nil {
				return nil, err
			}
			return &heldLock{l: l, fd: dirfd}, nil
		}
		fd, err := unix.FcntlInt(uintptr(dirfd), unix.F_DUPFD_CLOEXEC, 0)
		if err != nil {
			return nil, err
		}
		p = &pendingFlock{fd: fd, granted: make(chan struct{})}
		t.mu.Lock()
		l.pending = p
		l.refs++
		go t.blockingFlock(l, p)
	}
	p.waiting = true
	t.mu.Unlock()
	select {
	case <-p.granted:
	case <-ctx.Done():
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	p.waiting = false
	if !p.done {
		// Left pending for the next writer, or for blockingFlock to
		// undo when nobody wants it any more.
		return nil, ctx.Err()
	}
	l.pending = nil
	t.unref(l)
	if p.err != nil {
		unix.Close(p.fd)
		return nil, p.err
	}
	h := &heldLock{l: l, fd: p.fd, ow: true}
	if err := ctx.Err(); err != nil {
		unix.Flock(p.fd, unix.LOCK_UN)
		unix.Close(p.fd)
		return nil, err
	}
	return h, nil
}

// blockingFlock waits in the kernel for the flock of p.fd. When it is
// granted and no writer waits for it any more, it gives it back.
func (t *lockTable) blockingFlock(l *dirLock, p *pendingFlock) {
	err := ignoringEINTR(func() error { return unix.Flock(p.fd, unix.LOCK_EX) })
	t.mu.Lock()
	defer t.mu.Unlock()
	p.done, p.err = true, err
	close(p.granted)
	if !l.held {
		// Nobody has the turn to take it over; a writer that has it
		// takes it when it looks, or pass drops it.
		t.dropPending(l)
	}
}
