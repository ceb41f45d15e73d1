package textsearch

import (
	"context"
	"errors"
	"io"
	"iter"
	"sync"
)

// FileResult is the outcome of searching one file.
type FileResult struct {
	// Name is the file's name as the caller gave it.
	Name string
	// Lines are the file's match and context lines, in order.
	Lines []Line
	// Err is ErrBinary for a binary file, or the error opening or reading
	// it; Lines are then empty.
	Err error
}

// Opener opens files by name; backend.Reader implements it.
type Opener interface {
	OpenRead(ctx context.Context, name string) (io.ReadCloser, error)
}

// DefaultWorkers is the number of files searched at once when the caller
// does not say. Remote storage gains most from reading several files at
// once; local disk is not hurt by it.
const DefaultWorkers = 8

// errEnough stops a file's search once it holds more lines than anyone
// will print.
var errEnough = errors.New("textsearch: enough lines")

// SearchFiles searches the files named by names, up to workers at a time,
// and calls fn with each file's result in the order of names. A file's
// result holds at most maxLines+1 lines (maxLines <= 0: all), which is
// enough for a capped printer to know that something was dropped. fn
// returning false stops the search. SearchFiles returns when every
// goroutine it started has finished; its error is the context's, if it
// was cancelled.
func (m *Matcher) SearchFiles(ctx context.Context, open Opener, names iter.Seq[string], workers, maxLines int, fn func(FileResult) bool) error {
	return SearchJobs(ctx, m, open.OpenRead, names, workers, maxLines, func(name string, r FileResult) bool {
		r.Name = name
		return fn(r)
	})
}

// SearchJobs is SearchFiles for files described by any value a caller
// finds convenient (a path to read and a path to show, say): open opens
// the file of a job, and fn receives each job with its result, whose
// Name is empty.
func SearchJobs[J any](ctx context.Context, m *Matcher, open func(context.Context, J) (io.ReadCloser, error), jobs iter.Seq[J], workers, maxLines int, fn func(J, FileResult) bool) error {
	if workers <= 0 {
		workers = DefaultWorkers
	}
	inner, cancel := context.WithCancel(ctx)

	type task struct {
		job J
		out chan FileResult
	}
	tasks := make(chan task)
	order := make(chan task, 2*workers)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(tasks)
		defer close(order)
		for j := range jobs {
			out := make(chan FileResult, 1)
			select {
			case order <- task{j, out}:
			case <-inner.Done():
				return
			}
			select {
			case tasks <- task{j, out}:
			case <-inner.Done():
				return
			}
		}
	})
	for range workers {
		wg.Go(func() {
			for t := range tasks {
				t.out <- searchJob(inner, m, open, t.job, maxLines)
			}
		})
	}
	// Cancel first, so a producer or worker blocked on a send gives up,
	// then wait for all of them.
	defer func() {
		cancel()
		wg.Wait()
	}()
	for p := range order {
		select {
		case r := <-p.out:
			if !fn(p.job, r) {
				return nil
			}
		case <-inner.Done():
			return ctx.Err()
		}
	}
	return ctx.Err()
}

// SearchFile searches one file; see [Matcher.SearchFiles] for maxLines.
func (m *Matcher) SearchFile(ctx context.Context, open Opener, name string, maxLines int) FileResult {
	return m.searchFile(ctx, open, name, maxLines)
}

func (m *Matcher) searchFile(ctx context.Context, open Opener, name string, maxLines int) FileResult {
	res := searchJob(ctx, m, open.OpenRead, name, maxLines)
	res.Name = name
	return res
}

// searchJob opens the file of one job and searches it.
func searchJob[J any](ctx context.Context, m *Matcher, open func(context.Context, J) (io.ReadCloser, error), job J, maxLines int) FileResult {
	var res FileResult
	if err := ctx.Err(); err != nil {
		res.Err = err
		return res
	}
	r, err := open(ctx, job)
	if err != nil {
		res.Err = err
		return res
	}
	defer r.Close()
	err = m.Search(ctx, r, func(l Line) error {
		if maxLines > 0 && len(res.Lines) > maxLines {
			return errEnough
		}
		res.Lines = append(res.Lines, l)
		return nil
	})
	if err != nil && err != errEnough {
		res.Lines = nil
		res.Err = err
	}
	return res
}
