//go:build linux

package local

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// An FS holds no descriptor of its own while it is idle. Its root is
// opened when a call needs it and kept, after the call, in a pool of idle
// roots that the whole process shares: the descriptor limit is the
// process's, and a server with a hundred thousand tenants must not hold a
// hundred thousand roots open. The pool keeps at most a quarter of the
// soft descriptor limit (and at most maxIdleRoots); beyond that the root
// used least recently is closed. A root is reopened by its path and must
// still be the directory New opened (same device and inode): a root that
// was moved or replaced meanwhile fails the call with errRootMoved rather
// than serve another directory.
var roots rootPool

// maxIdleRoots bounds the idle roots kept open whatever the limit.
const maxIdleRoots = 1024

// errRootMoved is the error of a call on an FS whose root path no longer
// names the directory New opened, found when the root had to be reopened.
var errRootMoved = errors.New("the root directory was moved or replaced since it was opened")

// rootHandle is an open root: the O_PATH descriptor and, on kernels
// without openat2, the os.Root fallback opener.
type rootHandle struct {
	fd  int
	dir *os.Root
}

// close releases the handle's descriptors.
func (h *rootHandle) close() {
	unix.Close(h.fd)
	if h.dir != nil {
		h.dir.Close()
	}
}

// openat opens name below the root, with openat2 or the fallback.
func (h *rootHandle) openat(name string, flags int) (int, error) {
	if h.dir != nil {
		return openInRoot(h.dir, name, flags)
	}
	return openat2(h.fd, name, flags)
}

// rootPool tracks the FSs whose root is open and idle, in a list through
// the FSs themselves (a release allocates nothing), most recently used at
// the front.
type rootPool struct {
	mu          sync.Mutex
	front, back *FS
	n           int // idle FSs
	maxOnce     sync.Once
	max         int
}

// push puts f at the front of the idle list. The caller holds p.mu.
func (p *rootPool) push(f *FS) {
	f.idle, f.prev, f.next = true, nil, p.front
	if p.front != nil {
		p.front.prev = f
	} else {
		p.back = f
	}
	p.front = f
	p.n++
}

// remove takes f off the idle list. The caller holds p.mu.
func (p *rootPool) remove(f *FS) {
	if f.prev != nil {
		f.prev.next = f.next
	} else {
		p.front = f.next
	}
	if f.next != nil {
		f.next.prev = f.prev
	} else {
		p.back = f.prev
	}
	f.idle, f.prev, f.next = false, nil, nil
	p.n--
}

// limit returns the number of idle roots the pool keeps.
func (p *rootPool) limit() int {
	p.maxOnce.Do(func() {
		var rl unix.Rlimit
		p.max = maxIdleRoots
		if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) == nil && rl.Cur/4 < uint64(p.max) {
			p.max = max(int(rl.Cur/4), 1)
		}
	})
	return p.max
}

// acquire returns f's open root for one use, opening it when it is not
// open; release ends the use.
func (p *rootPool) acquire(f *FS) (*rootHandle, error) {
	p.mu.Lock()
	if h, err := p.take(f); h != nil || err != nil {
		p.mu.Unlock()
		return h, err
	}
	p.mu.Unlock()
	h, err := f.openRoot()
	if isDescriptorLimit(err) && p.shed() > 0 {
		h, err = f.openRoot()
	}
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if held, err := p.take(f); held != nil || err != nil {
		// Another call opened it meanwhile, or Close ran.
		h.close()
		return held, err
	}
	f.h = h
	f.users++
	return h, nil
}

// take returns f's root for one use when it is open, nil when it is not.
// The caller holds p.mu.
func (p *rootPool) take(f *FS) (*rootHandle, error) {
	if f.closed {
		return nil, fs.ErrClosed
	}
	if f.h == nil {
		return nil, nil
	}
	if f.idle {
		p.remove(f)
	}
	f.users++
	return f.h, nil
}

// release ends one use of f's root. The last use of a closed FS closes
// it; otherwise the root becomes idle, and the root idle longest is
// closed when the pool is full.
func (p *rootPool) release(f *FS) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f.users--
	if f.users > 0 {
		return
	}
	if f.closed {
		f.h.close()
		f.h = nil
		return
	}
	p.push(f)
	for p.n > p.limit() {
		p.evict(p.back)
	}
}

// evict closes the idle root of f. The caller holds p.mu.
func (p *rootPool) evict(f *FS) {
	p.remove(f)
	f.h.close()
	f.h = nil
}

// shed closes every idle root, when the process has run out of
// descriptors, and returns how many it closed.
func (p *rootPool) shed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.n
	for p.back != nil {
		p.evict(p.back)
	}
	return n
}

// close closes f's root unless a call uses it (the last one closes it
// then) and marks f closed.
func (p *rootPool) close(f *FS) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	if f.users == 0 && f.h != nil {
		if f.idle {
			p.remove(f)
		}
		f.h.close()
		f.h = nil
	}
	return nil
}

// isDescriptorLimit reports whether err says the process or the system
// has no descriptor left.
func isDescriptorLimit(err error) bool {
	return err != nil && errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE)
}
